// Where `atrium login` keeps its tokens: one JSON file, mode 0600 in a 0700 directory, holding one
// entry per server URL. Access tokens are refreshed with the refresh token when they are about to
// expire; a lock file makes parallel CLI runs refresh once, because the server rotates refresh
// tokens and treats a second use of an old one as theft (it revokes the whole sign-in).
import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export interface StoredTokens {
  access_token: string;
  refresh_token?: string | undefined;
  token_type: string;
  scope?: string | undefined;
  /** Seconds since the epoch; absent when the server did not say. */
  expires_at?: number | undefined;
  client_id: string;
  saved_at: string;
}

interface CredentialsFile {
  version: 1;
  servers: Record<string, StoredTokens>;
}

/** Tokens as a token endpoint returns them. */
export interface TokenResponse {
  access_token: string;
  refresh_token?: string | undefined;
  token_type?: string | undefined;
  scope?: string | undefined;
  expires_in?: number | undefined;
}

export class NotSignedInError extends Error {}

/** Refresh this long before the access token expires, so it does not expire in flight. */
export const EXPIRY_MARGIN_SECONDS = 30;

export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.ATRIUM_CONFIG_DIR) return env.ATRIUM_CONFIG_DIR;
  return join(env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'atrium');
}

/** One key per server however it was typed: no trailing slash, lower-case scheme and host. */
export function serverKey(url: string): string {
  const parsed = URL.parse(url);
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) throw new Error(`not an http(s) URL: ${url}`);
  return `${parsed.origin}${parsed.pathname}`.replace(/\/+$/, '');
}

export function tokensFrom(response: TokenResponse, clientId: string, previous?: StoredTokens, now = Date.now()): StoredTokens {
  return {
    access_token: response.access_token,
    // A refresh response without a new refresh token means the old one stays valid.
    refresh_token: response.refresh_token ?? previous?.refresh_token,
    token_type: response.token_type ?? 'Bearer',
    scope: response.scope ?? previous?.scope,
    expires_at: typeof response.expires_in === 'number' ? Math.floor(now / 1000) + response.expires_in : undefined,
    client_id: clientId,
    saved_at: new Date(now).toISOString(),
  };
}

export function isFresh(tokens: StoredTokens, now = Date.now()): boolean {
  return tokens.expires_at === undefined || tokens.expires_at - EXPIRY_MARGIN_SECONDS > now / 1000;
}

export class CredentialStore {
  readonly dir: string;
  readonly file: string;

  constructor(dir = configDir()) {
    this.dir = dir;
    this.file = join(dir, 'credentials.json');
  }

  #read(): CredentialsFile {
    let text: string;
    try {
      text = readFileSync(this.file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, servers: {} };
      throw error;
    }
    const parsed = JSON.parse(text) as Partial<CredentialsFile>;
    return { version: 1, servers: parsed.servers && typeof parsed.servers === 'object' ? parsed.servers : {} };
  }

  /** Writes through a temporary file and a rename, so a crash never leaves half a file. */
  #write(data: CredentialsFile): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const temp = `${this.file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    writeFileSync(temp, `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600 });
    chmodSync(temp, 0o600);
    renameSync(temp, this.file);
  }

  get(server: string): StoredTokens | undefined {
    return this.#read().servers[serverKey(server)];
  }

  servers(): string[] {
    return Object.keys(this.#read().servers);
  }

  save(server: string, tokens: StoredTokens): void {
    this.#withLock(() => {
      const data = this.#read();
      data.servers[serverKey(server)] = tokens;
      this.#write(data);
    });
  }

  /** Removes a server's entry; true when there was one. */
  delete(server: string): boolean {
    return this.#withLock(() => {
      const data = this.#read();
      const key = serverKey(server);
      if (!(key in data.servers)) return false;
      delete data.servers[key];
      this.#write(data);
      return true;
    });
  }

  /**
   * A usable access token for the server: the stored one while it is fresh, else a refreshed one
   * (saved before it is returned). Throws NotSignedInError when there is nothing to use.
   */
  async accessToken(server: string, refresh: (tokens: StoredTokens) => Promise<TokenResponse>, options: { force?: boolean } = {}): Promise<string> {
    const current = this.get(server);
    if (!current) throw new NotSignedInError(`Not signed in to ${serverKey(server)}. Run: npx atrium login --server ${serverKey(server)}`);
    if (!options.force && isFresh(current)) return current.access_token;
    return this.#withLockAsync(async () => {
      // Another process may have refreshed while we waited for the lock.
      const latest = this.get(server);
      if (!latest) throw new NotSignedInError(`Not signed in to ${serverKey(server)}. Run: npx atrium login --server ${serverKey(server)}`);
      if (latest.access_token !== current.access_token && isFresh(latest)) return latest.access_token;
      if (!latest.refresh_token) throw new NotSignedInError(`The sign-in to ${serverKey(server)} expired. Run: npx atrium login --server ${serverKey(server)}`);
      let response: TokenResponse;
      try {
        response = await refresh(latest);
      } catch (error) {
        // The server no longer honours the refresh token (expired, revoked, or its family was
        // revoked): the stored sign-in is dead, so forget it.
        if ((error as { error?: unknown }).error !== 'invalid_grant') throw error;
        const data = this.#read();
        delete data.servers[serverKey(server)];
        this.#write(data);
        throw new NotSignedInError(`The sign-in to ${serverKey(server)} is no longer valid. Run: npx atrium login --server ${serverKey(server)}`);
      }
      const data = this.#read();
      data.servers[serverKey(server)] = tokensFrom(response, latest.client_id, latest);
      this.#write(data);
      return response.access_token;
    });
  }

  // A lock file created exclusively. A lock older than STALE_LOCK_MS belongs to a process that died.
  #lockFile(): string {
    return `${this.file}.lock`;
  }

  #tryLock(): boolean {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    try {
      closeSync(openSync(this.#lockFile(), 'wx', 0o600));
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      try {
        if (Date.now() - statSync(this.#lockFile()).mtimeMs > STALE_LOCK_MS) rmSync(this.#lockFile(), { force: true });
      } catch {
        // released meanwhile
      }
      return false;
    }
  }

  #withLock<T>(fn: () => T): T {
    const deadline = Date.now() + LOCK_WAIT_MS;
    while (!this.#tryLock()) {
      if (Date.now() > deadline) throw new Error(`${this.#lockFile()} is held by another atrium process`);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
    }
    try {
      return fn();
    } finally {
      rmSync(this.#lockFile(), { force: true });
    }
  }

  async #withLockAsync<T>(fn: () => Promise<T>): Promise<T> {
    const deadline = Date.now() + LOCK_WAIT_MS;
    while (!this.#tryLock()) {
      if (Date.now() > deadline) throw new Error(`${this.#lockFile()} is held by another atrium process`);
      await new Promise((r) => setTimeout(r, 50));
    }
    try {
      return await fn();
    } finally {
      rmSync(this.#lockFile(), { force: true });
    }
  }
}

const STALE_LOCK_MS = 60_000;
const LOCK_WAIT_MS = 30_000;

export const DEFAULT_SERVER = 'http://localhost:8000';

/** A mistake in how a command was called: exit code 2. */
export class UsageError extends Error {}

/** `--server`, else ATRIUM_URL, else the one stored sign-in, else ATRIUM_PUBLIC_URL, else localhost:8000. */
export function resolveServer(flag: string | undefined, env: NodeJS.ProcessEnv = process.env, store = new CredentialStore(configDir(env))): string {
  if (flag) return serverKey(flag);
  if (env.ATRIUM_URL) return serverKey(env.ATRIUM_URL);
  const stored = store.servers();
  if (stored.length === 1) return stored[0]!;
  if (stored.length > 1) throw new UsageError(`Signed in to ${stored.length} servers (${stored.join(', ')}): choose one with --server URL or ATRIUM_URL=URL`);
  return serverKey(env.ATRIUM_PUBLIC_URL || DEFAULT_SERVER);
}
