// Helpers for webhook tests: a scriptable local receiver that records every request byte for byte,
// an independent signature check (jose + node:crypto, none of Atrium's code), and services on a
// database of their own (so other suites' workers, configured differently, never claim these jobs),
// started with or without the default workers.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { jwtVerify } from 'jose';
import { SERVE_NODE_FLAGS } from '../../bin/serve-flags.js';
import type { Background } from '../../src/main.ts';
import type { AppContext } from '../../src/context.ts';
import { onPath } from './postgres.ts';
import { freePort, startTestService, type Engine, type TestService } from './service.ts';

export interface Received {
  n: number;
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  json: any;
  at: number;
}

export interface Reply {
  status?: number;
  headers?: Record<string, string>;
  body?: string;
  /** Wait this long before answering. */
  delayMs?: number;
  /** Send the status, headers and the body's first byte at once, the rest this much later. */
  stallBodyMs?: number;
}

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** Decides each answer; default 200 `{"ok":true}`. */
  respond: (request: Received) => Reply;
  waitFor(predicate: (all: Received[]) => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startReceiver(respond: (request: Received) => Reply = () => ({})): Promise<Receiver> {
  const received: Received[] = [];
  const waiters = new Set<() => void>();
  const receiver: Receiver = {
    url: '',
    port: 0,
    received,
    respond,
    waitFor(predicate, timeoutMs = 20_000) {
      if (predicate(received)) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const check = () => {
          if (!predicate(received)) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`receiver: condition not met within ${timeoutMs} ms (${received.length} requests received)`));
        }, timeoutMs);
        waiters.add(check);
      });
    },
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      let json: unknown;
      try {
        json = JSON.parse(body.toString('utf8'));
      } catch {
        json = undefined;
      }
      const entry: Received = { n: received.length + 1, method: req.method ?? '', url: req.url ?? '', headers: req.headers, body, json, at: Date.now() };
      const reply = receiver.respond(entry);
      received.push(entry);
      for (const w of [...waiters]) w();
      const send = () => {
        if (res.destroyed) return;
        res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers });
        const body = reply.body ?? '{"ok":true}';
        if (!reply.stallBodyMs) return res.end(body);
        res.write(body.slice(0, 1));
        setTimeout(() => { if (!res.destroyed) res.end(body.slice(1)); }, reply.stallBodyMs);
      };
      if (reply.delayMs) setTimeout(send, reply.delayMs);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.port = (server.address() as AddressInfo).port;
  receiver.url = `http://127.0.0.1:${receiver.port}`;
  return receiver;
}

/**
 * Verifies a delivery the way a receiver written from the documentation would: the JWT in
 * `Service-Signature: Bearer <jwt>` is HS256 under the secret's UTF-8 bytes, unexpired, and its
 * `sha256` claim is the lowercase hex SHA-256 of the exact body bytes. Throws when any check fails.
 */
export async function verifyDelivery(secret: string, body: Uint8Array, header: string | string[] | undefined, now?: Date) {
  if (typeof header !== 'string' || !header.startsWith('Bearer ')) throw new Error('missing or malformed Service-Signature');
  const { payload, protectedHeader } = await jwtVerify(header.slice('Bearer '.length), new TextEncoder().encode(secret), {
    algorithms: ['HS256'],
    requiredClaims: ['sha256', 'iat', 'exp'],
    ...(now ? { currentDate: now } : {}),
  });
  const digest = createHash('sha256').update(body).digest('hex');
  if (payload.sha256 !== digest) throw new Error('signature does not match the body');
  return { payload, protectedHeader };
}

export type WebhookTestService = TestService;

/**
 * A service on a fresh data dir and (postgres) a fresh database, with private targets allowed so
 * it can deliver to the local receiver. `workers` replaces the default background work (pass
 * `() => []` to drive a worker by hand with an injected clock).
 */
export async function startWebhookService(engine: Engine, env: Record<string, string> = {}, workers?: (ctx: AppContext) => Background[]): Promise<WebhookTestService> {
  return startTestService(engine, { ATRIUM_WEBHOOKS_ALLOW_PRIVATE: 'true', ...env }, workers ? { workers } : {});
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `fn` until it returns a truthy value. */
export async function eventually<T>(fn: () => Promise<T | undefined | false>, timeoutMs = 20_000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await sleep(everyMs);
  }
}

const repoRoot = join(import.meta.dirname, '..', '..');
const setpriv = onPath('setpriv');

export interface AtriumChild {
  url: string;
  child: ChildProcess;
  /** Resolves when the process has exited. */
  exited: Promise<void>;
  kill(signal: NodeJS.Signals): Promise<void>;
  /** The last 20 KB the process printed, stdout and stderr. */
  output(): string;
}

/** Runs `atrium <args>` to completion (e.g. bootstrap) and returns stdout. */
export function atriumCommand(args: string[], env: Record<string, string>): string {
  const result = spawnSync(process.execPath, [join(repoRoot, 'src/cli/main.ts'), ...args], { env: { ...process.env, ...env }, encoding: 'utf8', timeout: 60_000 });
  if (result.status !== 0) throw new Error(`atrium ${args[0]} failed (${result.status}): ${result.stderr}`);
  return result.stdout;
}

/**
 * `atrium serve` as a child process (what operators run), on 127.0.0.1 with the given settings.
 * It dies with the test process (parent-death signal) so nothing outlives a killed run.
 */
export async function spawnAtrium(env: Record<string, string>): Promise<AtriumChild> {
  const port = await freePort();
  const argv = [process.execPath, ...SERVE_NODE_FLAGS, join(repoRoot, 'src/cli/main.ts'), 'serve'];
  const child = spawn(setpriv ? setpriv : argv[0]!, setpriv ? ['--pdeathsig=KILL', '--', ...argv] : argv.slice(1), {
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', ATRIUM_PUBLIC_URL: `http://127.0.0.1:${port}`, ATRIUM_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // The end of what it printed (warnings and errors: the log level is warn), for failure messages.
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-20_000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`atrium serve exited early: ${output}`);
    try {
      if ((await fetch(`${url}/readyz`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`atrium serve did not become ready: ${output}`);
    }
    await sleep(50);
  }
  return {
    url,
    child,
    exited,
    async kill(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
    output: () => output,
  };
}

/** Instances on one database must share the key that encrypts stored secrets (test-only value). */
const CHILD_SECRET_KEY = Buffer.alloc(32, 9).toString('base64');

/** Settings shared by child instances of one test database (`isolatedDatabase`). */
export function childEnv(database: { env: Record<string, string> }): Record<string, string> {
  return {
    ...database.env,
    ATRIUM_SECRET_KEY: CHILD_SECRET_KEY,
    ATRIUM_WEBHOOKS_ALLOW_PRIVATE: 'true',
  };
}
