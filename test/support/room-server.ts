// A fake room server that plays the other side of docs/room-servers.md, as a room-server author
// would write it from that page and nothing else (none of Atrium's code):
//   - it authenticates to Atrium with a project API key holding the `room_server` role;
//   - it reports sessions, their end and their participants over the REST API;
//   - it exports telemetry with the official OpenTelemetry SDK and OTLP/HTTP exporters (JSON or
//     protobuf), naming the session with the `atrium.session.id` resource attribute;
//   - it serves the two endpoints Atrium calls (queued messages, session terminations), verifies
//     each call's signature offline against Atrium's JWKS, and, once told to terminate a session,
//     ends it and reports the end like a real room server would.
import { createHash } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose';
import { SeverityNumber, context, trace } from '@opentelemetry/api';
import { OTLPLogExporter as JsonLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPLogExporter as ProtoLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { OTLPMetricExporter as JsonMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPMetricExporter as ProtoMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtoTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { LoggerProvider, SimpleLogRecordProcessor } from '@opentelemetry/sdk-logs';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';

/** A call Atrium made, with the verified claims of its signature. */
export interface RoomServerCall {
  n: number;
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  json: any;
  claims: JWTPayload;
  at: number;
}

export interface CallReply {
  status?: number;
  body?: string;
  headers?: Record<string, string>;
  /** Wait this long before answering. */
  delayMs?: number;
}

export type Protocol = 'json' | 'protobuf';

export interface FakeRoomServer {
  url: string;
  /** Calls whose signature verified, in arrival order. */
  calls: RoomServerCall[];
  /** Calls refused because their signature did not verify, with the reason. */
  refused: { path: string; reason: string }[];
  /** Decides each answer to a verified call; default 202 `{}`. */
  respond: (call: RoomServerCall) => CallReply;
  /** Report the end of a session Atrium asked to terminate (default true). */
  endOnTerminate: boolean;
  /**
   * The Atrium this room server works with: its URL, and the project and key the server reports
   * with; `issuer` is its ATRIUM_PUBLIC_URL when that is not `url`.
   */
  connect(atrium: { url: string; projectId: string; apiKey: string; issuer?: string }): void;
  /** Atrium's REST API as this room server uses it. */
  api<T = any>(method: string, path: string, json?: unknown): Promise<{ status: number; body: T }>;
  startSession(roomName: string, extra?: { session_id?: string; agent_name?: string }): Promise<any>;
  endSession(sessionId: string): Promise<any>;
  reportParticipants(sessionId: string, events: { type: 'joined' | 'left'; participant_id: string; role?: string; name?: string }[]): Promise<any>;
  /** Exports spans with the official SDK: `parent` names another span of the same call. */
  exportSpans(resource: Record<string, string>, spans: { name: string; attributes?: Record<string, string | number | boolean>; parent?: string }[], protocol: Protocol): Promise<void>;
  exportLogs(resource: Record<string, string>, records: { body: string; severity?: 'INFO' | 'WARN' | 'ERROR'; attributes?: Record<string, string | number> }[], protocol: Protocol): Promise<void>;
  exportMetrics(resource: Record<string, string>, record: (meter: ReturnType<MeterProvider['getMeter']>) => void, protocol: Protocol): Promise<void>;
  waitFor(predicate: (calls: RoomServerCall[]) => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

const SEVERITY = { INFO: SeverityNumber.INFO, WARN: SeverityNumber.WARN, ERROR: SeverityNumber.ERROR };

/** Starts the fake on a free loopback port; `connect` it to Atrium once Atrium is up. */
export async function startFakeRoomServer(): Promise<FakeRoomServer> {
  let atrium: { url: string; projectId: string; apiKey: string; issuer?: string } | undefined;
  let jwks: ReturnType<typeof createRemoteJWKSet> | undefined;
  const waiters = new Set<() => void>();
  const need = () => {
    if (!atrium) throw new Error('connect the fake room server to Atrium first');
    return atrium;
  };

  async function verify(path: string, headers: IncomingHttpHeaders, body: Buffer): Promise<JWTPayload> {
    const { url, issuer } = need();
    const header = headers.authorization;
    if (typeof header !== 'string' || !header.startsWith('Bearer ')) throw new Error('no bearer signature');
    // As docs/room-servers.md says: ES256 under a key of Atrium's JWKS, issued by Atrium for this
    // room server, unexpired, bound to this endpoint and to the exact body.
    const { payload } = await jwtVerify(header.slice('Bearer '.length), jwks!, {
      algorithms: ['ES256'],
      issuer: issuer ?? url,
      audience: fake.url,
      requiredClaims: ['iat', 'exp', 'jti', 'sha256', 'htu'],
    });
    if (payload.htu !== `${fake.url}${path}`) throw new Error(`signed for ${String(payload.htu)}, not ${fake.url}${path}`);
    if (payload.sha256 !== createHash('sha256').update(body).digest('hex')) throw new Error('the body does not match its signature');
    return payload;
  }

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const body = Buffer.concat(chunks);
      const path = req.url ?? '';
      let claims: JWTPayload;
      try {
        claims = await verify(path, req.headers, body);
      } catch (error) {
        fake.refused.push({ path, reason: (error as Error).message });
        res.writeHead(401, { 'content-type': 'application/json' });
        res.end('{"error":"bad signature"}');
        return;
      }
      const call: RoomServerCall = { n: fake.calls.length + 1, path, headers: req.headers, body, json: JSON.parse(body.toString('utf8')), claims, at: Date.now() };
      const reply = fake.respond(call);
      fake.calls.push(call);
      for (const wake of [...waiters]) wake();
      const send = () => {
        if (res.destroyed) return;
        res.writeHead(reply.status ?? 202, { 'content-type': 'application/json', ...reply.headers });
        res.end(reply.body ?? '{}');
        const accepted = (reply.status ?? 202) < 300;
        if (accepted && path === '/atrium/v1/session-terminations' && fake.endOnTerminate) {
          void fake.endSession(call.json.session_id).catch(() => {});
        }
      };
      if (reply.delayMs) setTimeout(send, reply.delayMs);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));

  const otlp = (signal: string) => ({ url: `${need().url}/otlp/v1/${signal}`, headers: { authorization: `Bearer ${need().apiKey}` } });

  const fake: FakeRoomServer = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls: [],
    refused: [],
    respond: () => ({}),
    endOnTerminate: true,
    connect(target) {
      atrium = target;
      jwks = createRemoteJWKSet(new URL(`${target.url}/.well-known/jwks.json`));
    },
    async api(method, path, json) {
      const { url, apiKey } = need();
      const response = await fetch(`${url}${path}`, {
        method,
        headers: { authorization: `Bearer ${apiKey}`, ...(json !== undefined ? { 'content-type': 'application/json' } : {}) },
        body: json === undefined ? null : JSON.stringify(json),
      });
      const text = await response.text();
      return { status: response.status, body: text ? JSON.parse(text) : undefined };
    },
    async startSession(roomName, extra = {}) {
      const r = await fake.api('POST', `/accounts/projects/${need().projectId}/sessions`, { room_name: roomName, ...extra });
      if (r.status !== 201 && r.status !== 200) throw new Error(`session start answered ${r.status}: ${JSON.stringify(r.body)}`);
      return r.body;
    },
    async endSession(sessionId) {
      const r = await fake.api('POST', `/accounts/projects/${need().projectId}/sessions/${sessionId}/end`, {});
      if (r.status !== 200) throw new Error(`session end answered ${r.status}: ${JSON.stringify(r.body)}`);
      return r.body;
    },
    async reportParticipants(sessionId, events) {
      const r = await fake.api('POST', `/accounts/projects/${need().projectId}/sessions/${sessionId}/participants`, { events });
      if (r.status !== 200) throw new Error(`participants answered ${r.status}: ${JSON.stringify(r.body)}`);
      return r.body;
    },
    async exportSpans(resource, spans, protocol) {
      const exporter = protocol === 'json' ? new JsonTraceExporter(otlp('traces')) : new ProtoTraceExporter(otlp('traces'));
      const provider = new TracerProvider({ resource: resourceFromAttributes(resource), spanProcessors: [new SimpleSpanProcessor({ exporter })] });
      const tracer = provider.getTracer('fake-room-server');
      const made = new Map<string, ReturnType<typeof tracer.startSpan>>();
      for (const spec of spans) {
        const parent = spec.parent ? made.get(spec.parent) : undefined;
        const span = tracer.startSpan(spec.name, { attributes: spec.attributes ?? {} }, parent ? trace.setSpan(context.active(), parent) : undefined);
        made.set(spec.name, span);
      }
      for (const span of [...made.values()].reverse()) span.end();
      await provider.forceFlush();
      await provider.shutdown();
    },
    async exportLogs(resource, records, protocol) {
      const exporter = protocol === 'json' ? new JsonLogExporter(otlp('logs')) : new ProtoLogExporter(otlp('logs'));
      const provider = new LoggerProvider({ resource: resourceFromAttributes(resource), processors: [new SimpleLogRecordProcessor({ exporter })] });
      const logger = provider.getLogger('fake-room-server');
      // One export per record, sent concurrently, so the arrival order is anyone's: distinct times
      // (a millisecond apart, in the order given) are what orders them in Atrium.
      const start = Date.now();
      records.forEach((record, i) => {
        logger.emit({ body: record.body, timestamp: start + i, severityText: record.severity ?? 'INFO', severityNumber: SEVERITY[record.severity ?? 'INFO'], attributes: record.attributes ?? {} });
      });
      await provider.forceFlush();
      await provider.shutdown();
    },
    async exportMetrics(resource, record, protocol) {
      const exporter = protocol === 'json' ? new JsonMetricExporter(otlp('metrics')) : new ProtoMetricExporter(otlp('metrics'));
      const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
      const provider = new MeterProvider({ resource: resourceFromAttributes(resource), readers: [reader] });
      record(provider.getMeter('fake-room-server'));
      // Shutting down collects and exports once (a flush first would export the points twice).
      await provider.shutdown();
    },
    waitFor(predicate, timeoutMs = 20_000) {
      if (predicate(fake.calls)) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const check = () => {
          if (!predicate(fake.calls)) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`fake room server: condition not met within ${timeoutMs} ms (${fake.calls.length} calls, ${fake.refused.length} refused)`));
        }, timeoutMs);
        waiters.add(check);
      });
    },
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
  return fake;
}
