// Calls from Atrium to the room server (ATRIUM_ROOM_SERVER_URL): the queued messages of scheduled
// tasks and session terminations. Always made by outbox jobs, never by a request handler, so a call
// survives a crash and is retried; each job records what happened on its own rows.
//
// Signing: every call carries `Authorization: Bearer <jwt>`, an ES256 JWT signed with the service's
// own signing keys (the ones published at /.well-known/jwks.json, which room servers already use to
// verify participant tokens), so a room server verifies Atrium offline without a shared secret. The
// claims bind the exact body (`sha256`, lowercase hex, as in webhook signatures), the room server
// (`aud` = ATRIUM_ROOM_SERVER_URL) and the endpoint (`htu`), and expire after five minutes.
import { randomUUID } from 'node:crypto';
import { sha256Hex } from '../crypto/secrets.ts';
import type { SigningKeys } from '../crypto/signing-keys.ts';
import { OutboundClient, retryAfterMs } from './outbound.ts';

/** What Atrium sends, by kind: the path under ATRIUM_ROOM_SERVER_URL. */
export const ROOM_SERVER_PATHS = {
  queueMessage: '/atrium/v1/queue-messages',
  terminateSession: '/atrium/v1/session-terminations',
} as const;

export const ROOM_SERVER_SIGNATURE_TTL_SECONDS = 300;
const TIMEOUT_MS = 15_000;
const USER_AGENT = 'Atrium-RoomServer/1';
/** Waits before each retry of a call that failed in a way worth retrying (about 43 minutes in all). */
const RETRY_SCHEDULE_MS = [5_000, 30_000, 120_000, 600_000, 1_800_000];
/** Longest wait a Retry-After can impose. */
const MAX_RETRY_AFTER_MS = 3_600_000;

export type RoomServerOutcome =
  | { ok: true; status: number }
  /** `retryAt` is undefined when the call should not be made again (a 4xx, or retries used up). */
  | { ok: false; error: string; retryAt: Date | undefined };

export class RoomServerClient {
  readonly #baseUrl: string | undefined;
  readonly #issuer: string;
  readonly #keys: SigningKeys;
  readonly #http = new OutboundClient({ allowPrivate: true });

  /** `baseUrl` is ATRIUM_ROOM_SERVER_URL (undefined when unset); `issuer` is ATRIUM_PUBLIC_URL. */
  constructor(options: { baseUrl: string | undefined; issuer: string; keys: SigningKeys }) {
    this.#baseUrl = options.baseUrl;
    this.#issuer = options.issuer;
    this.#keys = options.keys;
  }

  /**
   * Sends one call, attempt number `attempt` (1 for the first). Resolves with the outcome; rejects
   * only when `signal` aborts (the worker is stopping and will run the job again).
   */
  async send(path: string, body: Record<string, unknown>, attempt: number, signal: AbortSignal, now = new Date()): Promise<RoomServerOutcome> {
    if (!this.#baseUrl) return { ok: false, error: 'No room server is configured (ATRIUM_ROOM_SERVER_URL is unset)', retryAt: undefined };
    const url = new URL(`${this.#baseUrl}${path}`);
    const bytes = Buffer.from(JSON.stringify(body), 'utf8');
    const headers = {
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      'atrium-attempt': String(attempt),
      authorization: `Bearer ${this.sign(url, bytes, now)}`,
    };
    try {
      const response = await this.#http.post(url, bytes, headers, { timeoutMs: TIMEOUT_MS, excerptBytes: 512, signal });
      if (response.status >= 200 && response.status < 300) return { ok: true, status: response.status };
      const retryable = response.status === 408 || response.status === 429 || response.status >= 500;
      const excerpt = response.excerpt.trim();
      const error = `HTTP ${response.status}${excerpt ? `: ${excerpt.slice(0, 300)}` : ''}`;
      return { ok: false, error, retryAt: retryable ? retryAt(attempt, now, retryAfterMs(response.headers['retry-after'], now)) : undefined };
    } catch (failure) {
      if (signal.aborted) throw failure;
      const { code, message } = failure as NodeJS.ErrnoException;
      return { ok: false, error: code && !message.includes(code) ? `${code}: ${message}` : message, retryAt: retryAt(attempt, now, undefined) };
    }
  }

  /** The JWT for one call: ES256 under the current signing key, bound to the body and the endpoint. */
  sign(url: URL, body: Uint8Array, now: Date): string {
    const iat = Math.floor(now.getTime() / 1000);
    return this.#keys.signJwt({
      sha256: sha256Hex(body), htm: 'POST', htu: url.toString(),
      iss: this.#issuer, aud: this.#baseUrl!, iat, exp: iat + ROOM_SERVER_SIGNATURE_TTL_SECONDS, jti: randomUUID(),
    });
  }

  close(): void {
    this.#http.close();
  }
}

/** When attempt `attempt` (1-based) that just failed is tried again; undefined once retries are used up. */
function retryAt(attempt: number, now: Date, retryAfter: number | undefined): Date | undefined {
  const scheduled = RETRY_SCHEDULE_MS[attempt - 1];
  if (scheduled === undefined) return undefined;
  return new Date(now.getTime() + Math.max(scheduled, Math.min(retryAfter ?? 0, MAX_RETRY_AFTER_MS)));
}
