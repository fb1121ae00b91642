// The webhook receiver helper: signatures built here independently with
// jose + node:crypto, exactly as the wire contract describes them, never with the helper's own code.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { resolve } from 'node:path';
import { test, type TestContext } from 'node:test';
import { jwtVerify, SignJWT } from 'jose';
import { pythonJson, SIGNATURE_TTL_SECONDS, signatureHeader } from '../../src/modules/webhooks/body.ts';
import { WebSocket } from 'ws';
import {
  createWebhookReceiver,
  verifyWebhookSignature,
  WebhookSignatureError,
  type TypedWebhookEvent,
  type WebhookEvent,
  type WebhookReceiverOptions,
} from '../../src/webhooks-receiver/index.ts';

const SECRET = 'whsec-test-0123456789abcdef';
const repoRoot = resolve(import.meta.dirname, '../..');

interface SignOptions {
  secret?: string;
  iat?: number;
  exp?: number | null;
  sha256?: string;
}

async function sign(bytes: Uint8Array | string, o: SignOptions = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const iat = o.iat ?? now;
  const claims: Record<string, unknown> = { sha256: o.sha256 ?? createHash('sha256').update(bytes).digest('hex'), iat };
  if (o.exp !== null) claims.exp = o.exp ?? iat + 300;
  const token = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(new TextEncoder().encode(o.secret ?? SECRET));
  return `Bearer ${token}`;
}

async function withReceiver(options: WebhookReceiverOptions, fn: (base: string, url: string) => Promise<void>): Promise<void> {
  const receiver = createWebhookReceiver({ secret: SECRET, port: 0, host: '127.0.0.1', onRejected: () => {}, ...options });
  const { port, url } = await receiver.listen();
  try {
    await fn(`http://127.0.0.1:${port}`, url);
  } finally {
    await receiver.close();
  }
}

async function post(url: string, body: string | Buffer, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers }, signal: AbortSignal.timeout(10_000) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

// Deliberately not JSON.stringify's formatting, with non-ASCII text and an extra payload key: the
// helper must hash the bytes it received, not a re-serialisation of what it parsed.
const ROOM_STARTED = '{"event": "room.started",  "data": {"room_name": "Grüße 🎉", "room_url": "wss://rooms.example/r", "session_id": "s-1"}, "team": "blue"}';

test('a correctly signed delivery reaches its typed handler with the event id, timestamp and attempt', async () => {
  const seen: TypedWebhookEvent<'room.started'>[] = [];
  const all: WebhookEvent[] = [];
  await withReceiver({ handlers: { 'room.started': (e) => { seen.push(e); } }, onEvent: (e) => { all.push(e); } }, async (_base, url) => {
    const id = randomUUID();
    const res = await post(url, ROOM_STARTED, {
      'service-signature': await sign(ROOM_STARTED),
      'service-event-id': id,
      'service-event-timestamp': '1767225600',
      'service-delivery-attempt': '2',
    });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { ok: true });
    assert.equal(seen.length, 1);
    assert.equal(seen[0].type, 'room.started');
    assert.deepEqual(seen[0].data, { room_name: 'Grüße 🎉', room_url: 'wss://rooms.example/r', session_id: 's-1' });
    assert.deepEqual(seen[0].payload, { team: 'blue' });
    assert.equal(seen[0].id, id);
    assert.equal(seen[0].timestamp, 1767225600);
    assert.equal(seen[0].attempt, 2);
    assert.equal(seen[0].raw.toString('utf8'), ROOM_STARTED);
    assert.equal(all.length, 1, 'onEvent sees the event too');
  });
});

test('every event type is dispatched to its own handler; unknown types are acknowledged', async () => {
  const got: string[] = [];
  const record = (e: WebhookEvent) => { got.push(`${e.type}:${JSON.stringify(e.data)}`); };
  const bodies = [
    { event: 'room.started', data: { room_name: 'r1' } },
    { event: 'room.ended', data: { room_name: 'r1', session_id: 's' } },
    { event: 'storage.file.updated', data: { path: 'a/b.txt', participant_id: 'p1' } },
    { event: 'storage.file.deleted', data: { path: 'a/b.txt', participant_id: 'p1' } },
    { event: 'room.call', data: { room_name: 'r1', room_url: 'wss://x/r1', token: 't', arguments: { q: 1 } } },
  ];
  const others: string[] = [];
  await withReceiver({
    handlers: { 'room.started': record, 'room.ended': record, 'storage.file.updated': record, 'storage.file.deleted': record, 'room.call': record },
    onEvent: (e) => { others.push(e.type); },
  }, async (_base, url) => {
    for (const b of [...bodies, { event: 'room.renamed', data: { x: 1 } }]) {
      const text = JSON.stringify(b);
      const res = await post(url, text, { 'service-signature': await sign(text) });
      assert.equal(res.status, 200, text);
    }
  });
  assert.deepEqual(got, bodies.map((b) => `${b.event}:${JSON.stringify(b.data)}`));
  assert.deepEqual(others, [...bodies.map((b) => b.event), 'room.renamed']);
});

test('a tampered body, a missing, expired, exp-less or wrong-secret signature is refused with 401', async () => {
  let calls = 0;
  await withReceiver({ onEvent: () => { calls++; } }, async (_base, url) => {
    const now = Math.floor(Date.now() / 1000);
    const tampered = ROOM_STARTED.replace('blue', 'red');
    const cases: [string, string, Record<string, string>][] = [
      ['tampered body', tampered, { 'service-signature': await sign(ROOM_STARTED) }],
      ['missing', ROOM_STARTED, {}],
      ['expired', ROOM_STARTED, { 'service-signature': await sign(ROOM_STARTED, { iat: now - 900, exp: now - 600 }) }],
      ['no exp (replayable forever)', ROOM_STARTED, { 'service-signature': await sign(ROOM_STARTED, { exp: null }) }],
      ['wrong secret', ROOM_STARTED, { 'service-signature': await sign(ROOM_STARTED, { secret: 'another-secret' }) }],
      ['no Bearer', ROOM_STARTED, { 'service-signature': (await sign(ROOM_STARTED)).slice('Bearer '.length) }],
      ['uppercase digest', ROOM_STARTED, { 'service-signature': await sign(ROOM_STARTED, { sha256: createHash('sha256').update(ROOM_STARTED).digest('hex').toUpperCase() }) }],
    ];
    for (const [name, body, headers] of cases) {
      const res = await post(url, body, headers);
      assert.equal(res.status, 401, name);
      assert.match(res.body.error.code, /^signature_/, name);
    }
    const expired = await post(url, ROOM_STARTED, { 'service-signature': await sign(ROOM_STARTED, { iat: now - 900, exp: now - 600 }) });
    assert.equal(expired.body.error.code, 'signature_expired');
  });
  assert.equal(calls, 0);
});

test('during a rotation the previous-secret header is accepted by a receiver that has only the old secret', async () => {
  const oldSecret = 'old-secret-aaaaaaaaaaaa';
  const newSecret = 'new-secret-bbbbbbbbbbbb';
  const headers = {
    'service-signature': await sign(ROOM_STARTED, { secret: newSecret }),
    'service-signature-previous': await sign(ROOM_STARTED, { secret: oldSecret }),
  };
  for (const secret of [oldSecret, newSecret]) {
    await withReceiver({ secret }, async (_base, url) => {
      assert.equal((await post(url, ROOM_STARTED, headers)).status, 200, `receiver with ${secret}`);
    });
  }
  // The previous header alone signs only for the old secret; a stranger's secret matches neither.
  await withReceiver({ secret: 'unrelated-secret-cccccc' }, async (_base, url) => {
    assert.equal((await post(url, ROOM_STARTED, headers)).status, 401);
  });
});

test('with verification off, unsigned deliveries are accepted', async () => {
  const seen: string[] = [];
  await withReceiver({ verify: false, secret: undefined, onEvent: (e) => { seen.push(e.type); } }, async (_base, url) => {
    assert.equal((await post(url, ROOM_STARTED)).status, 200);
  });
  assert.deepEqual(seen, ['room.started']);
});

test('verification on without any secret is a start-up error; ATRIUM_WEBHOOK_SECRET supplies one', async () => {
  const saved = process.env.ATRIUM_WEBHOOK_SECRET;
  try {
    delete process.env.ATRIUM_WEBHOOK_SECRET;
    assert.throws(() => createWebhookReceiver({ port: 0 }), /no secret/);
    process.env.ATRIUM_WEBHOOK_SECRET = SECRET;
    const receiver = createWebhookReceiver({ port: 0, host: '127.0.0.1' });
    const { url } = await receiver.listen();
    try {
      assert.equal((await post(url, ROOM_STARTED, { 'service-signature': await sign(ROOM_STARTED) })).status, 200);
      assert.equal((await post(url, ROOM_STARTED, { 'service-signature': await sign(ROOM_STARTED, { secret: 'x-other' }) })).status, 401);
    } finally {
      await receiver.close();
    }
  } finally {
    if (saved === undefined) delete process.env.ATRIUM_WEBHOOK_SECRET;
    else process.env.ATRIUM_WEBHOOK_SECRET = saved;
  }
});

test('a throwing handler answers 500 so the sender retries; the retry with the same event id succeeds', async () => {
  const attempts: (string | undefined)[] = [];
  const errors: unknown[] = [];
  await withReceiver({
    handlers: {
      'room.started': (e) => {
        attempts.push(e.id);
        if (attempts.length === 1) throw new Error('database down');
      },
    },
    onError: (error) => { errors.push(error); },
  }, async (_base, url) => {
    const id = randomUUID();
    const first = await post(url, ROOM_STARTED, { 'service-signature': await sign(ROOM_STARTED), 'service-event-id': id, 'service-delivery-attempt': '1' });
    assert.equal(first.status, 500);
    const second = await post(url, ROOM_STARTED, { 'service-signature': await sign(ROOM_STARTED), 'service-event-id': id, 'service-delivery-attempt': '2' });
    assert.equal(second.status, 200);
    assert.deepEqual(attempts, [id, id]);
  });
  assert.equal(errors.length, 1);
  assert.match(String(errors[0]), /database down/);
});

test('an oversized body is refused with 413, declared or streamed', async () => {
  let calls = 0;
  await withReceiver({ maxBodyBytes: 64 * 1024, onEvent: () => { calls++; } }, async (_base, url) => {
    const big = JSON.stringify({ event: 'room.started', data: { room_name: 'x'.repeat(70 * 1024) } });
    const declared = await post(url, big, { 'service-signature': await sign(big) });
    assert.equal(declared.status, 413);
    assert.equal(declared.body.error.code, 'body_too_large');
    // Chunked: no Content-Length to refuse up front, so the limit is applied while reading.
    const bytes = new TextEncoder().encode(big);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < bytes.length; i += 8192) controller.enqueue(bytes.slice(i, i + 8192));
        controller.close();
      },
    });
    const res = await fetch(url, { method: 'POST', body: stream, duplex: 'half', headers: { 'service-signature': await sign(big) }, signal: AbortSignal.timeout(10_000) } as RequestInit);
    assert.equal(res.status, 413);
    await res.text();
    // Just under the limit still passes.
    const fits = JSON.stringify({ event: 'room.started', data: { room_name: 'x'.repeat(60 * 1024) } });
    assert.equal((await post(url, fits, { 'service-signature': await sign(fits) })).status, 200);
  });
  assert.equal(calls, 1);
});

test('GET / is a health check; malformed envelopes are 400; other routes 404', async () => {
  await withReceiver({}, async (base, url) => {
    const health = await fetch(`${base}/`);
    assert.equal(health.status, 200);
    assert.deepEqual(await health.json(), { ok: true });
    for (const body of ['not json', '[]', '{"data":{}}', '{"event":"room.started","data":"x"}', '{"event":"room.started","data":{}}']) {
      const res = await post(url, body, { 'service-signature': await sign(body) });
      assert.equal(res.status, 400, body);
    }
    assert.equal((await fetch(`${base}/elsewhere`)).status, 404);
    assert.equal((await fetch(url, { method: 'PUT' })).status, 405);
  });
});

test('a custom path is honoured', async () => {
  await withReceiver({ path: '/hooks/atrium' }, async (base, url) => {
    assert.equal(url, `${base}/hooks/atrium`);
    assert.equal((await post(url, ROOM_STARTED, { 'service-signature': await sign(ROOM_STARTED) })).status, 200);
    assert.equal((await post(`${base}/webhook`, ROOM_STARTED, { 'service-signature': await sign(ROOM_STARTED) })).status, 404);
  });
});

// --- websocket room.call ---------------------------------------------------------------------

const CALL = JSON.stringify({ event: 'room.call', data: { room_name: 'lobby', room_url: 'wss://rooms.example/lobby', token: 'participant-jwt', arguments: { topic: 'hi' } } });

function openSocket(url: string, headers: Record<string, string>): Promise<{ ws: WebSocket } | { status: number; body: string }> {
  return new Promise((resolvePromise, rejectPromise) => {
    const ws = new WebSocket(url.replace(/^http/, 'ws'), { headers, handshakeTimeout: 5000 });
    ws.once('open', () => resolvePromise({ ws }));
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { body += c; });
      res.on('end', () => resolvePromise({ status: res.statusCode ?? 0, body }));
    });
    ws.once('error', rejectPromise);
  });
}

test('websocket room.call with a good signature: the socket is handed to the handler and echoes', async () => {
  const calls: TypedWebhookEvent<'room.call'>[] = [];
  await withReceiver({
    onCall: (event, socket) => {
      calls.push(event);
      socket.on('message', (data, isBinary) => socket.send(data, { binary: isBinary }));
    },
  }, async (_base, url) => {
    const opened = await openSocket(url, { 'Service-Webhook': CALL, 'Service-Signature': await sign(CALL), 'Service-Event-Id': 'evt-1' });
    if (!('ws' in opened)) assert.fail(`upgrade refused: ${opened.status} ${opened.body}`);
    const { ws } = opened;
    try {
      const reply = once(ws, 'message');
      ws.send('ping 🎈');
      const [data] = await Promise.race([reply, new Promise<never>((_, r) => setTimeout(() => r(new Error('no echo')), 5000))]);
      assert.equal(String(data), 'ping 🎈');
    } finally {
      ws.close();
    }
    assert.equal(calls.length, 1);
    assert.deepEqual(calls[0].data, { room_name: 'lobby', room_url: 'wss://rooms.example/lobby', token: 'participant-jwt', arguments: { topic: 'hi' } });
    assert.equal(calls[0].id, 'evt-1');
  });
});

test('the websocket signature covers the exact header bytes, UTF-8 included', async () => {
  const calls: TypedWebhookEvent<'room.call'>[] = [];
  await withReceiver({ onCall: (event, socket) => { calls.push(event); socket.close(); } }, async (_base, url) => {
    const envelope = JSON.stringify({ event: 'room.call', data: { room_name: 'Café', room_url: 'wss://x/c', token: 't' } });
    const bytes = Buffer.from(envelope, 'utf8');
    // Node writes header strings as latin1, so this string puts exactly the UTF-8 bytes on the wire.
    const opened = await openSocket(url, { 'Service-Webhook': bytes.toString('latin1'), 'Service-Signature': await sign(bytes) });
    if (!('ws' in opened)) assert.fail(`upgrade refused: ${opened.status} ${opened.body}`);
    await once(opened.ws, 'close');
  });
  assert.equal(calls[0]?.data.room_name, 'Café');
});

test('websocket room.call with a bad, missing or expired signature, or not a room.call, is refused before upgrading', async () => {
  let calls = 0;
  await withReceiver({ onCall: () => { calls++; } }, async (_base, url) => {
    const now = Math.floor(Date.now() / 1000);
    const otherEvent = JSON.stringify({ event: 'room.started', data: { room_name: 'lobby' } });
    const cases: [string, Record<string, string>, number][] = [
      ['missing signature', { 'Service-Webhook': CALL }, 401],
      ['wrong secret', { 'Service-Webhook': CALL, 'Service-Signature': await sign(CALL, { secret: 'nope-nope' }) }, 401],
      ['signature of another envelope', { 'Service-Webhook': CALL.replace('lobby', 'vault'), 'Service-Signature': await sign(CALL) }, 401],
      ['expired', { 'Service-Webhook': CALL, 'Service-Signature': await sign(CALL, { iat: now - 900, exp: now - 600 }) }, 401],
      ['not room.call', { 'Service-Webhook': otherEvent, 'Service-Signature': await sign(otherEvent) }, 400],
      ['no envelope', { 'Service-Signature': await sign('') }, 400],
    ];
    for (const [name, headers, status] of cases) {
      const result = await openSocket(url, headers);
      assert.ok('status' in result, `${name}: upgrade should be refused`);
      assert.equal(result.status, status, name);
      assert.ok(JSON.parse(result.body).error.code, name);
    }
  });
  assert.equal(calls, 0);
});

test('websocket upgrades are refused when no onCall handler is configured', async () => {
  await withReceiver({}, async (_base, url) => {
    const result = await openSocket(url, { 'Service-Webhook': CALL, 'Service-Signature': await sign(CALL) });
    assert.ok('status' in result);
    assert.equal(result.status, 404);
  });
});

// --- standalone verification -----------------------------------------------------------------

test('verifyWebhookSignature checks raw bytes, both headers, expiry against the given clock', async () => {
  const body = Buffer.from(ROOM_STARTED, 'utf8');
  const header = await sign(body);
  const { claims } = await verifyWebhookSignature({ secret: SECRET, body, header });
  assert.equal(claims.sha256, createHash('sha256').update(body).digest('hex'));
  await verifyWebhookSignature({ secret: SECRET, body: ROOM_STARTED, header });
  await verifyWebhookSignature({ secret: ['old-one', SECRET], body, header });
  await verifyWebhookSignature({ secret: SECRET, body, header: await sign(body, { secret: 'newer' }), previousHeader: header });

  const reason = async (p: Promise<unknown>) => {
    const error = await p.then(() => undefined, (e: unknown) => e);
    assert.ok(error instanceof WebhookSignatureError, `expected a WebhookSignatureError, got ${String(error)}`);
    return error.reason;
  };
  assert.equal(await reason(verifyWebhookSignature({ secret: SECRET, body: `${ROOM_STARTED} `, header })), 'body_mismatch');
  assert.equal(await reason(verifyWebhookSignature({ secret: SECRET, body, header: undefined })), 'missing');
  assert.equal(await reason(verifyWebhookSignature({ secret: 'wrong', body, header })), 'invalid');
  assert.equal(await reason(verifyWebhookSignature({ secret: SECRET, body, header, now: Date.now() + 3600_000 })), 'expired');
  assert.equal(await reason(verifyWebhookSignature({ secret: SECRET, body, header: 'Bearer not.a.jwt' })), 'malformed');
  // A token signed with another algorithm is refused even with the right key material.
  const hs512 = await new SignJWT({ sha256: createHash('sha256').update(body).digest('hex'), exp: Math.floor(Date.now() / 1000) + 60 })
    .setProtectedHeader({ alg: 'HS512' })
    .sign(new TextEncoder().encode(SECRET));
  assert.equal(await reason(verifyWebhookSignature({ secret: SECRET, body, header: `Bearer ${hs512}` })), 'malformed');
});

test('each refusal says what was wrong: algorithm, claims, token shape, a digest that is not text', async () => {
  const body = Buffer.from(ROOM_STARTED, 'utf8');
  const refusal = async (header: string) => {
    const error = await verifyWebhookSignature({ secret: SECRET, body, header }).then(() => undefined, (e: unknown) => e);
    assert.ok(error instanceof WebhookSignatureError, `expected a WebhookSignatureError, got ${String(error)}`);
    return `${error.reason}: ${error.message}`;
  };
  const key = new TextEncoder().encode(SECRET);
  const exp = Math.floor(Date.now() / 1000) + 60;
  const digest = createHash('sha256').update(body).digest('hex');
  const hs384 = await new SignJWT({ sha256: digest, exp }).setProtectedHeader({ alg: 'HS384' }).sign(key);
  assert.equal(await refusal(`Bearer ${hs384}`), 'malformed: signature must use HS256');
  const notYet = await new SignJWT({ sha256: digest, exp, nbf: exp }).setProtectedHeader({ alg: 'HS256' }).sign(key);
  assert.match(await refusal(`Bearer ${notYet}`), /^malformed: signature rejected: .*nbf/);
  assert.equal(await refusal('Bearer not.a.jwt'), 'malformed: malformed signature token');
  // A correctly signed token whose digest claim is a number, not the hex text: refused, not a crash.
  const numeric = await new SignJWT({ sha256: 12345, exp }).setProtectedHeader({ alg: 'HS256' }).sign(key);
  assert.equal(await refusal(`Bearer ${numeric}`), 'body_mismatch: signature does not match the body');
});

// --- the command and the example ------------------------------------------------------------

/** Starts a process; lines of its stdout and stderr are awaited by pattern. Killed after 30 s at most. */
function startProcess(t: TestContext, args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, args, { cwd: repoRoot, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  t.after(() => {
    clearTimeout(killer);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const reader = (stream: NodeJS.ReadableStream) => {
    const lines = createInterface({ input: stream })[Symbol.asyncIterator]();
    const seen: string[] = [];
    return async (pattern: RegExp): Promise<RegExpExecArray> => {
      for (;;) {
        const { value, done } = await lines.next();
        if (done) throw new Error(`process ended before printing ${pattern}; it printed:\n${seen.join('\n')}`);
        seen.push(value);
        const m = pattern.exec(value);
        if (m) return m;
      }
    };
  };
  return {
    stdout: reader(child.stdout),
    stderr: reader(child.stderr),
    async stop(): Promise<number | null> {
      child.kill('SIGTERM');
      const [code] = await once(child, 'exit');
      return code as number | null;
    },
  };
}

test('`atrium webhooks listen` prints each verified event as a JSON line and refuses bad signatures', async (t) => {
  const proc = startProcess(t, [resolve(repoRoot, 'src/cli/main.ts'), 'webhooks', 'listen', '--port', '0', '--host', '127.0.0.1'], { ATRIUM_WEBHOOK_SECRET: SECRET });
  const [, url] = await proc.stderr(/listening on (http:\/\/127\.0\.0\.1:\d+\/webhook)/);

  const refused = await post(url, ROOM_STARTED, { 'service-signature': await sign(ROOM_STARTED, { secret: 'not-it' }) });
  assert.equal(refused.status, 401);
  await proc.stderr(/rejected POST \/webhook: 401/);

  const id = randomUUID();
  const res = await post(url, ROOM_STARTED, { 'service-signature': await sign(ROOM_STARTED), 'service-event-id': id, 'service-delivery-attempt': '1', 'service-event-timestamp': '1767225600' });
  assert.equal(res.status, 200);
  // The refused delivery printed nothing, so the first stdout line is the accepted one.
  const printed = JSON.parse((await proc.stdout(/^/)).input);
  assert.equal(printed.event, 'room.started');
  assert.equal(printed.id, id);
  assert.equal(printed.attempt, 1);
  assert.equal(printed.timestamp, 1767225600);
  assert.equal(printed.transport, 'post');
  assert.deepEqual(printed.data, { room_name: 'Grüße 🎉', room_url: 'wss://rooms.example/r', session_id: 's-1' });
  assert.deepEqual(printed.payload, { team: 'blue' });

  // A websocket room.call is verified, printed, then closed normally: the command joins no room.
  const opened = await openSocket(url, { 'Service-Webhook': CALL, 'Service-Signature': await sign(CALL) });
  if (!('ws' in opened)) assert.fail(`upgrade refused: ${opened.status} ${opened.body}`);
  const [closeCode] = await once(opened.ws, 'close');
  assert.equal(closeCode, 1000);
  const call = JSON.parse((await proc.stdout(/^/)).input);
  assert.equal(call.transport, 'websocket');
  assert.equal(call.event, 'room.call');
  assert.equal(call.data.room_name, 'lobby');

  assert.equal(await proc.stop(), 0);
});

test('the runnable example receives a signed event and echoes over a room.call websocket', async (t) => {
  const proc = startProcess(t, [resolve(repoRoot, 'examples/webhook-receiver/index.ts')], { ATRIUM_WEBHOOK_SECRET: SECRET, PORT: '0', HOST: '127.0.0.1' });
  const [, url] = await proc.stdout(/receiving webhooks on (http:\/\/127\.0\.0\.1:\d+\/webhook)/);
  assert.equal((await post(url, ROOM_STARTED, { 'service-signature': await sign(ROOM_STARTED) })).status, 200);
  await proc.stdout(/room Grüße 🎉 started at wss:\/\/rooms\.example\/r/);

  const opened = await openSocket(url, { 'Service-Webhook': CALL, 'Service-Signature': await sign(CALL) });
  if (!('ws' in opened)) assert.fail(`upgrade refused: ${opened.status} ${opened.body}`);
  const reply = once(opened.ws, 'message');
  opened.ws.send('echo?');
  assert.equal(String((await reply)[0]), 'echo?');
  opened.ws.close();
  await proc.stdout(/call into room lobby with arguments \{"topic":"hi"\}/);
  assert.equal(await proc.stop(), 0);
});

// --- what mutation testing found untested (docs/architecture.md#mutation-testing) -----------------

test('the header grammar: "Bearer", any case, spaces or tabs around the token, nothing else', async () => {
  const body = Buffer.from(ROOM_STARTED, 'utf8');
  const token = (await sign(body)).slice('Bearer '.length);
  for (const header of [`bearer ${token}`, `Bearer  \t${token}`, `Bearer ${token} \t`]) await verifyWebhookSignature({ secret: SECRET, body, header });
  const reasonOf = (header: string, previousHeader?: string) => verifyWebhookSignature({ secret: SECRET, body, header, previousHeader }).then(() => 'verified', (e: WebhookSignatureError) => e.reason);
  for (const header of [`xBearer ${token}`, `Bearer ${token} extra`, `Bearer${token}`, `Bearer ${token}\u00a0`]) assert.equal(await reasonOf(header), 'malformed', header);
  assert.equal(await reasonOf('', `Bearer ${token}`), 'verified', 'an empty current header leaves the previous one');
  assert.equal(await verifyWebhookSignature({ secret: SECRET, body, header: '' }).then(() => 'verified', (e: WebhookSignatureError) => e.reason), 'missing', 'an empty header is a missing one');
});

test('secrets: empty ones are ignored, none at all is a programming error; bytes and text bodies agree', async () => {
  const body = Buffer.from(ROOM_STARTED, 'utf8');
  const header = await sign(body);
  await verifyWebhookSignature({ secret: ['', SECRET], body, header });
  await assert.rejects(verifyWebhookSignature({ secret: '', body, header }), TypeError);
  await assert.rejects(verifyWebhookSignature({ secret: [], body, header }), TypeError);
  await verifyWebhookSignature({ secret: SECRET, body: new Uint8Array(body), header });
  await verifyWebhookSignature({ secret: SECRET, body: ROOM_STARTED, header });
});

test('expiry: the default tolerance is 30 s, a given one replaces it', async () => {
  const body = Buffer.from(ROOM_STARTED, 'utf8');
  const iat = Math.floor(Date.now() / 1000);
  const header = await sign(body, { iat });
  const at = (seconds: number) => (iat + seconds) * 1000;
  await verifyWebhookSignature({ secret: SECRET, body, header, now: at(300 + 20) });
  const late = await verifyWebhookSignature({ secret: SECRET, body, header, now: at(300 + 20), clockTolerance: 0 }).then(() => 'verified', (e: WebhookSignatureError) => e.reason);
  assert.equal(late, 'expired');
});

test('failures keep the first reason: a malformed current header, a digest of another length, a token without exp', async () => {
  const body = Buffer.from(ROOM_STARTED, 'utf8');
  const reasonOf = (options: Partial<Parameters<typeof verifyWebhookSignature>[0]>) =>
    verifyWebhookSignature({ secret: SECRET, body, header: undefined, ...options }).then(() => 'verified', (e: unknown) => (e instanceof WebhookSignatureError ? e.reason : `not a signature error: ${String(e)}`));
  assert.equal(await reasonOf({ header: 'Basic abc' }), 'malformed');
  assert.equal(await reasonOf({ header: 'Basic abc', previousHeader: await sign(body, { secret: 'other' }) }), 'malformed', 'the current header is reported first');
  assert.equal(await reasonOf({ header: await sign(body, { sha256: 'abc' }) }), 'body_mismatch', 'a short digest is a mismatch, not a crash');
  assert.equal(await reasonOf({ header: await sign(body, { exp: null }) }), 'malformed');
  assert.equal(await reasonOf({ secret: [SECRET, 'wrong'], header: await sign(body, { iat: 1, exp: 2 }) }), 'expired', 'an expired token is not retried as a bad signature under the next secret');
});

test("the sender's signature header verifies with jose alone and with the helper: HS256, exp = iat + 300", async () => {
  const body = Buffer.from(pythonJson({ event: 'room.started', data: { room_name: 'é' } }), 'utf8');
  const iat = Math.floor(Date.now() / 1000);
  const header = signatureHeader(SECRET, body, iat);
  const { payload, protectedHeader } = await jwtVerify(header.slice('Bearer '.length), new TextEncoder().encode(SECRET), { algorithms: ['HS256'] });
  assert.deepEqual(protectedHeader, { alg: 'HS256', typ: 'JWT' });
  assert.deepEqual(payload, { sha256: createHash('sha256').update(body).digest('hex'), iat, exp: iat + SIGNATURE_TTL_SECONDS });
  assert.equal(SIGNATURE_TTL_SECONDS, 300);
  await verifyWebhookSignature({ secret: SECRET, body, header });
});

test('the body encoder: top-level null and undefined, non-finite numbers, and values JSON cannot hold', () => {
  assert.equal(pythonJson(undefined), 'null');
  assert.equal(pythonJson(null), 'null');
  assert.equal(pythonJson([Number.NaN, Number.POSITIVE_INFINITY, -Number.POSITIVE_INFINITY]), '[null, null, null]');
  assert.throws(() => pythonJson(() => 1), TypeError);
  assert.throws(() => pythonJson({ big: 1n }), TypeError);
});
