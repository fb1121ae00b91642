// What one tenant or one client can do to an instance everyone shares. OTLP upload slots: a room
// server that sends slow bodies holds at most its project's share, and only until the body
// deadline. Bodies over a route's limit: the client gets a 413 it can read even while it is still
// writing (a node:http client that sends its Content-Length, as the OpenTelemetry exporters do,
// otherwise sees EPIPE and retries as if the network had failed).
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { after, before, test } from 'node:test';
import { call, createTenant, forEachEngine, startTestService, type Tenant, type TestService } from '../support/service.ts';

const SLOTS = 32;
const PER_PROJECT = 8;

/** A tiny valid OTLP/JSON trace export (no spans: nothing to attribute). */
const EMPTY_EXPORT = JSON.stringify({ resourceSpans: [] });

/** Opens an export that announces a large body and sends one byte of it: it holds its slot while the server waits. */
function slowExport(service: TestService, apiKey: string): { socket: Socket; answer: Promise<string>; closed: Promise<void> } {
  const { port } = new URL(service.url);
  const socket = connect(Number(port), '127.0.0.1');
  socket.write([
    'POST /otlp/v1/traces HTTP/1.1', `Host: 127.0.0.1:${port}`, `Authorization: Bearer ${apiKey}`,
    'Content-Type: application/x-protobuf', 'Content-Length: 1000000', '', '',
  ].join('\r\n'));
  socket.write(Buffer.from([0x0a]));
  let received = '';
  const answer = new Promise<string>((resolve) => socket.on('data', (chunk) => {
    received += chunk.toString('latin1');
    if (received.includes('\r\n\r\n')) resolve(received);
  }));
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.on('error', () => {});
  return { socket, answer, closed };
}

/**
 * Sends `body` with its Content-Length through node:http, writing all of it, and what the client
 * saw once both its writing and the answer are over: the answer, or the error the socket gave
 * (while still writing, or after: either way an exporter counts the export as failed by the network).
 */
async function sendWhole(url: string, body: Buffer, headers: Record<string, string>): Promise<{ status: number; text: string } | { error: string }> {
  let failed: string | undefined;
  let answered: (value: { status: number; text: string } | undefined) => void;
  const answer = new Promise<{ status: number; text: string } | undefined>((resolve) => { answered = resolve; });
  const req = request(url, { method: 'POST', headers: { ...headers, 'content-length': String(body.length) } }, (res) => {
    let text = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => { text += chunk; });
    res.on('end', () => answered({ status: res.statusCode!, text }));
    res.on('error', () => answered(undefined));
  });
  const written = new Promise<void>((resolve) => {
    req.once('finish', () => resolve());
    req.once('close', () => resolve());
  });
  req.on('error', (error: NodeJS.ErrnoException) => {
    failed ??= error.code ?? error.message;
    answered(undefined);
  });
  req.end(body);
  const [seen] = await Promise.all([answer, written]);
  return failed !== undefined || !seen ? { error: failed ?? 'no answer' } : seen;
}

forEachEngine('shared limits: OTLP upload slots', (engine) => {
  let service: TestService;
  let greedy: Tenant;
  let other: Tenant;
  const opened: Socket[] = [];

  before(async () => {
    service = await startTestService(engine, { ATRIUM_OTLP_BODY_TIMEOUT_SECONDS: '2' });
    greedy = await createTenant(service, 'greedy');
    other = await createTenant(service, 'other');
  });
  after(async () => {
    for (const socket of opened) socket.destroy();
    await service?.stop();
  });

  test('one project\'s slow bodies hold its share of the slots, not everyone\'s', async () => {
    const exports = Array.from({ length: SLOTS }, () => slowExport(service, greedy.apiKey));
    opened.push(...exports.map((e) => e.socket));
    // Beyond its share, the project is told to back off at once (which of its exports got a slot
    // is the server's order of arrival).
    const refused: typeof exports = [];
    const shareRefused = new Promise<void>((resolve) => {
      for (const e of exports) {
        void e.answer.then(() => {
          refused.push(e);
          if (refused.length === SLOTS - PER_PROJECT) resolve();
        });
      }
    });
    const outcome = await Promise.race([shareRefused.then(() => 'share'), new Promise<string>((resolve) => setTimeout(() => resolve('none'), 5000))]);
    const held = exports.filter((e) => !refused.includes(e));
    let cut = 0;
    for (const e of held) void e.closed.then(() => { cut += 1; });

    // Meanwhile another project's room server exports as usual.
    const exported = await call(service, 'POST', '/otlp/v1/traces', { token: other.apiKey, json: EMPTY_EXPORT });
    assert.equal(exported.status, 200, `another project's export: ${JSON.stringify(exported.body)}`);
    assert.equal(outcome, 'share', `the exports beyond the project's share are answered (${refused.length} were)`);
    for (const e of refused) assert.match(await e.answer, /^HTTP\/1\.1 429 /);
    assert.equal(cut, 0, 'while the slow ones still held their slots');

    // At the body deadline the slow ones are cut off, and their slots are free again.
    await Promise.all(held.map((e) => e.closed));
    assert.equal(refused.length, SLOTS - PER_PROJECT, 'none of the held ones was answered');
    assert.equal((await call(service, 'POST', '/otlp/v1/traces', { token: greedy.apiKey, json: EMPTY_EXPORT })).status, 200);
  });
});

forEachEngine('shared limits: a body over the limit gets a readable 413 on every route', (engine) => {
  let service: TestService;
  let tenant: Tenant;

  before(async () => {
    service = await startTestService(engine, {
      ATRIUM_MAX_UPLOAD_BYTES: String(1024 * 1024),
      ATRIUM_LLM_MAX_BODY_BYTES: String(1024 * 1024),
      ATRIUM_OPENAI_API_KEY: 'sk-test-not-used',
      ATRIUM_OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
    });
    tenant = await createTenant(service, 'bodies');
  });
  after(() => service?.stop());

  test('a 24 MiB OTLP export sent as the OpenTelemetry exporters send it is answered 413, not cut off', async () => {
    const answer = await sendWhole(`${service.url}/otlp/v1/traces`, Buffer.alloc(24 * 1024 * 1024, 0x0a), {
      authorization: `Bearer ${tenant.apiKey}`, 'content-type': 'application/x-protobuf',
    });
    assert.ok('status' in answer, `the client saw ${JSON.stringify(answer)}`);
    assert.equal(answer.status, 413);
    // A google.rpc.Status: code 8 (RESOURCE_EXHAUSTED) and the reason.
    assert.match(answer.text, /payload_too_large/);
  });

  test('every other kind of route too: JSON, storage uploads, the LLM proxy, sign-in forms', async () => {
    const project = `/accounts/projects/${tenant.projectId}`;
    const big = Buffer.alloc(8 * 1024 * 1024, 0x61);
    const routes: [string, Record<string, string>][] = [
      [`${project}/rooms`, { 'content-type': 'application/json' }],
      [`/projects/${tenant.projectId}/storage/upload?path=big.bin`, { 'content-type': 'application/octet-stream' }],
      ['/openai/v1/chat/completions', { 'content-type': 'application/json' }],
      ['/interaction/some-flow/password', { 'content-type': 'application/x-www-form-urlencoded' }],
    ];
    for (const [path, headers] of routes) {
      const answer = await sendWhole(`${service.url}${path}`, big, { authorization: `Bearer ${tenant.apiKey}`, ...headers });
      assert.ok('status' in answer, `${path}: the client saw ${JSON.stringify(answer)}`);
      assert.equal(answer.status, 413, `${path}: ${answer.text}`);
    }
  });
});
