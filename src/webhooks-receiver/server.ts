// The webhook receiver helper (docs/webhook-receiver.md): `GET /` health check, `POST <path>`
// deliveries, and `GET <path>` websocket upgrades carrying the `room.call` handoff. node:http rather
// than a framework, because both signatures cover exact bytes (the raw body, a raw header value)
// that a framework's parsers would otherwise get to first.
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { TypedWebhookEvent, WebhookEvent, WebhookEventMap, WebhookEventType } from './types.ts';
import { verifyWebhookSignature, WebhookSignatureError } from './verify.ts';

export type WebhookHandlers = {
  [K in WebhookEventType]?: (event: TypedWebhookEvent<K>) => unknown;
};

export interface WebhookRejection {
  status: number;
  code: string;
  message: string;
  method: string;
  path: string;
}

export interface WebhookReceiverOptions {
  /** Signing secret(s); defaults to env ATRIUM_WEBHOOK_SECRET. Several are tried in turn. */
  secret?: string | readonly string[];
  /** Check signatures (default). Turn off only for local development. */
  verify?: boolean;
  /** Delivery and websocket path; `/webhook` by default. */
  path?: string;
  /** 8080 by default; 0 picks a free port (see the address `listen()` resolves with). */
  port?: number;
  /** Interface to bind; all interfaces when unset. */
  host?: string;
  /** Typed handler per event type, for POST deliveries. */
  handlers?: WebhookHandlers;
  /** Takes the upgraded socket of a websocket `room.call`; without it such upgrades are refused. */
  onCall?: (event: TypedWebhookEvent<'room.call'>, socket: WebSocket) => unknown;
  /** Called for every verified POST delivery after its typed handler, including types this version does not know. */
  onEvent?: (event: WebhookEvent) => unknown;
  /** A handler threw: the delivery is answered 500 so that the sender retries. Defaults to console.error. */
  onError?: (error: unknown, event: WebhookEvent) => void;
  /** A request was refused (bad signature, malformed envelope, too large…). */
  onRejected?: (rejection: WebhookRejection) => void;
  /** Largest accepted body in bytes; 1 MiB by default. */
  maxBodyBytes?: number;
  /** Seconds of clock skew allowed on the signature's expiry; 30 by default. */
  clockTolerance?: number;
}

export interface WebhookReceiver {
  /** Starts listening; resolves with the bound address and the delivery URL. */
  listen(): Promise<{ host: string; port: number; url: string }>;
  /** Stops accepting, closes open websockets and connections. */
  close(): Promise<void>;
  server: Server;
}

class Rejection extends Error {
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

const KNOWN_TYPES = new Set<string>(['room.started', 'room.ended', 'storage.file.updated', 'storage.file.deleted', 'room.call']);

// Fields each known event must carry as strings; a delivery without them cannot honour its type.
const REQUIRED: Record<WebhookEventType, readonly string[]> = {
  'room.started': ['room_name'],
  'room.ended': ['room_name'],
  'storage.file.updated': ['path', 'participant_id'],
  'storage.file.deleted': ['path', 'participant_id'],
  'room.call': ['room_name', 'room_url', 'token'],
};
const OPTIONAL: Record<WebhookEventType, readonly string[]> = {
  'room.started': ['room_url', 'session_id'],
  'room.ended': ['session_id'],
  'storage.file.updated': [],
  'storage.file.deleted': [],
  'room.call': [],
};

const STATUS_TEXT: Record<number, string> = { 400: 'Bad Request', 401: 'Unauthorized', 404: 'Not Found', 405: 'Method Not Allowed' };

export function createWebhookReceiver(options: WebhookReceiverOptions = {}): WebhookReceiver {
  const verify = options.verify ?? true;
  const envSecret = process.env.ATRIUM_WEBHOOK_SECRET;
  const secret = options.secret ?? (envSecret ? envSecret : undefined);
  const secrets = secret === undefined ? [] : (typeof secret === 'string' ? [secret] : [...secret]).filter((s) => s.length > 0);
  if (verify && secrets.length === 0) {
    // Refusing every delivery at run time would look like a sender bug; say it at start-up instead.
    throw new TypeError('webhook receiver: verification is on but no secret is set (pass secret, set ATRIUM_WEBHOOK_SECRET, or turn verification off for local development)');
  }
  const path = options.path ?? '/webhook';
  if (!path.startsWith('/')) throw new TypeError(`webhook receiver: path must start with "/", got ${JSON.stringify(path)}`);
  const port = options.port ?? 8080;
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
  const handlers = options.handlers ?? {};
  const onError = options.onError ?? ((error: unknown, event: WebhookEvent) => console.error(`webhook handler for ${event.type} failed:`, error));

  const wss = new WebSocketServer({ noServer: true });
  const server = createServer((req, res) => {
    handleRequest(req, res).catch((error: unknown) => {
      // Only reached by a bug in this file; the request must still be answered.
      console.error('webhook receiver:', error);
      if (!res.headersSent) sendJson(res, 500, { error: { code: 'internal', message: 'internal error' } });
    });
  });
  // A request body that trickles in forever must not hold a connection open.
  server.requestTimeout = 30_000;
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    handleUpgrade(req, socket, head).catch((error: unknown) => {
      console.error('webhook receiver:', error);
      socket.destroy();
    });
  });

  function pathOf(req: IncomingMessage): string {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    return q === -1 ? url : url.slice(0, q);
  }

  function report(req: IncomingMessage, r: Rejection): void {
    options.onRejected?.({ status: r.status, code: r.code, message: r.message, method: req.method ?? '', path: pathOf(req) });
  }

  async function checkSignature(headers: IncomingHttpHeaders, signed: Uint8Array): Promise<void> {
    if (!verify) return;
    try {
      await verifyWebhookSignature({
        secret: secrets,
        body: signed,
        header: single(headers['service-signature']),
        previousHeader: single(headers['service-signature-previous']),
        clockTolerance: options.clockTolerance,
      });
    } catch (error) {
      if (error instanceof WebhookSignatureError) throw new Rejection(401, `signature_${error.reason}`, error.message);
      throw error;
    }
  }

  async function handleRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const p = pathOf(req);
    if (p === path) {
      if (req.method === 'POST') return handleDelivery(req, res);
      if (req.method === 'GET' || req.method === 'HEAD') {
        res.setHeader('Upgrade', 'websocket');
        return sendJson(res, 426, { error: { code: 'upgrade_required', message: `GET ${path} is the websocket upgrade for room.call; deliveries are POSTed` } });
      }
      res.setHeader('Allow', 'GET, POST');
      return sendJson(res, 405, { error: { code: 'method_not_allowed', message: `${req.method} is not allowed on ${path}` } });
    }
    if (p === '/' && (req.method === 'GET' || req.method === 'HEAD')) return sendJson(res, 200, { ok: true });
    sendJson(res, 404, { error: { code: 'not_found', message: `no route ${req.method} ${p}` } });
  }

  async function handleDelivery(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let event: WebhookEvent;
    try {
      const raw = await readBody(req, maxBodyBytes);
      await checkSignature(req.headers, raw);
      event = parseEnvelope(raw, req.headers);
    } catch (error) {
      if (!(error instanceof Rejection)) throw error;
      report(req, error);
      // The rest of an oversized body is only drained, not kept: close rather than read on for a next request.
      if (error.status === 413) res.setHeader('Connection', 'close');
      return sendJson(res, error.status, { error: { code: error.code, message: error.message } });
    }
    try {
      const handler = (handlers as Record<string, ((e: WebhookEvent) => unknown) | undefined>)[event.type];
      if (handler && KNOWN_TYPES.has(event.type)) await handler(event);
      await options.onEvent?.(event);
    } catch (error) {
      onError(error, event);
      return sendJson(res, 500, { error: { code: 'handler_failed', message: 'the handler failed; deliver again later' } });
    }
    sendJson(res, 200, { ok: true });
  }

  async function handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    socket.on('error', () => socket.destroy());
    try {
      if (pathOf(req) !== path) throw new Rejection(404, 'not_found', `no websocket route ${pathOf(req)}`);
      if (req.method !== 'GET') throw new Rejection(405, 'method_not_allowed', 'websocket upgrades use GET');
      if (!options.onCall) throw new Rejection(404, 'not_found', 'this receiver takes no room.call websocket connections');
      const header = single(req.headers['service-webhook']);
      if (header === undefined) throw new Rejection(400, 'missing_envelope', 'missing Service-Webhook header');
      // Node decodes header values as latin1, one char per byte, so this gives back the bytes sent.
      const raw = Buffer.from(header, 'latin1');
      await checkSignature(req.headers, raw);
      const event = parseEnvelope(raw, req.headers);
      if (!isCall(event)) throw new Rejection(400, 'unexpected_event', `websocket upgrades carry room.call, not ${event.type}`);
      const onCall = options.onCall;
      wss.handleUpgrade(req, socket, head, (ws) => {
        Promise.resolve()
          .then(() => onCall(event, ws))
          .catch((error: unknown) => {
            onError(error, event);
            ws.close(1011, 'handler failed');
          });
      });
    } catch (error) {
      if (!(error instanceof Rejection)) throw error;
      report(req, error);
      const body = JSON.stringify({ error: { code: error.code, message: error.message } });
      socket.end(
        `HTTP/1.1 ${error.status} ${STATUS_TEXT[error.status] ?? 'Error'}\r\n` +
          'Content-Type: application/json\r\n' +
          `Content-Length: ${Buffer.byteLength(body)}\r\n` +
          'Connection: close\r\n\r\n' +
          body,
      );
    }
  }

  return {
    server,
    listen() {
      return new Promise((resolve, reject) => {
        const failed = (error: Error) => reject(error);
        server.once('error', failed);
        server.listen(port, options.host, () => {
          server.off('error', failed);
          const address = server.address() as AddressInfo;
          const shown = address.address === '::' || address.address === '0.0.0.0' ? 'localhost' : address.family === 'IPv6' ? `[${address.address}]` : address.address;
          resolve({ host: address.address, port: address.port, url: `http://${shown}:${address.port}${path}` });
        });
      });
    },
    close() {
      return new Promise((resolve) => {
        for (const client of wss.clients) client.terminate();
        wss.close();
        if (!server.listening) return resolve();
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    req.resume();
    return Promise.reject(new Rejection(413, 'body_too_large', `body exceeds ${limit} bytes`));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    req.on('data', (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > limit) {
        // Keep draining (without keeping) so the client can read the 413 before the connection closes.
        done = true;
        chunks.length = 0;
        reject(new Rejection(413, 'body_too_large', `body exceeds ${limit} bytes`));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (!done) resolve(Buffer.concat(chunks, size));
    });
    req.on('error', (error) => {
      if (!done) reject(error);
      done = true;
    });
  });
}

function parseEnvelope(raw: Buffer, headers: IncomingHttpHeaders): WebhookEvent {
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new Rejection(400, 'invalid_json', 'the envelope is not JSON');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new Rejection(400, 'invalid_envelope', 'the envelope must be a JSON object');
  const { event: type, data, ...payload } = body as Record<string, unknown>;
  if (typeof type !== 'string' || type.length === 0) throw new Rejection(400, 'invalid_envelope', 'the envelope lacks its "event" type');
  if (typeof data !== 'object' || data === null || Array.isArray(data)) throw new Rejection(400, 'invalid_envelope', '"data" must be a JSON object');
  const fields = data as Record<string, unknown>;
  if (KNOWN_TYPES.has(type)) checkData(type as WebhookEventType, fields);
  return {
    type,
    data: fields,
    id: single(headers['service-event-id']),
    timestamp: integerHeader(headers['service-event-timestamp']),
    attempt: integerHeader(headers['service-delivery-attempt']),
    payload,
    raw,
    headers,
  };
}

function checkData<K extends WebhookEventType>(type: K, data: Record<string, unknown>): asserts data is Record<string, unknown> & WebhookEventMap[K] {
  for (const key of REQUIRED[type]) {
    if (typeof data[key] !== 'string') throw new Rejection(400, 'invalid_envelope', `${type} needs data.${key} as a string`);
  }
  for (const key of OPTIONAL[type]) {
    // Absent and null both mean "not known"; handlers see a missing key either way.
    if (data[key] === null) delete data[key];
    else if (data[key] !== undefined && typeof data[key] !== 'string') throw new Rejection(400, 'invalid_envelope', `${type} data.${key} must be a string`);
  }
  if (type === 'room.call') {
    const args = data.arguments;
    if (args === null) delete data.arguments;
    else if (args !== undefined && (typeof args !== 'object' || Array.isArray(args))) throw new Rejection(400, 'invalid_envelope', 'room.call data.arguments must be a JSON object');
  }
}

// parseEnvelope has checked the data of every known type, so the type name is enough.
function isCall(event: WebhookEvent): event is TypedWebhookEvent<'room.call'> {
  return event.type === 'room.call';
}

function integerHeader(value: string | string[] | undefined): number | undefined {
  const text = single(value);
  if (text === undefined || !/^\d{1,15}$/.test(text.trim())) return undefined;
  return Number(text.trim());
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}
