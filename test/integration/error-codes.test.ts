// Errors a client can branch on: situations a client handles differently have codes of their own
// (a taken name, a paused feed, a disabled webhook, a full project, the last admin), and every
// response names its request: `X-Request-Id` (the caller's when sane, else a new one), in every
// error body and on every log line written while serving it.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, test } from 'node:test';
import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import { call, createTenant, forEachEngine, startTestService, type Tenant, type TestService } from '../support/service.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

forEachEngine('error codes and request ids', (engine) => {
  let service: TestService;
  let tenant: Tenant;
  const logged: Record<string, unknown>[] = [];
  before(async () => {
    const sink = new Writable({ write(chunk, _encoding, done) { logged.push(JSON.parse(String(chunk))); done(); } });
    // The pretty format's line per request, written here as JSON, is a log line of every request.
    // Webhooks point at a closed local port: nothing here needs them to arrive.
    service = await startTestService(engine, { ATRIUM_LOG_FORMAT: 'pretty', ATRIUM_WEBHOOKS_ALLOW_PRIVATE: 'true' }, { log: pino({ level: 'info' }, sink) as unknown as FastifyBaseLogger });
    tenant = await createTenant(service, 'codes');
  });
  after(() => service?.stop());

  const project = () => `/accounts/projects/${tenant.projectId}`;
  const as = { token: () => tenant.apiKey };

  test('a taken name is already_exists, for rooms, feeds and webhooks alike', async () => {
    const room = { name: `taken-${crypto.randomUUID().slice(0, 8)}` };
    assert.equal((await call(service, 'POST', `${project()}/rooms`, { token: as.token(), json: room })).status, 201);
    const again = await call(service, 'POST', `${project()}/rooms`, { token: as.token(), json: room });
    assert.deepEqual([again.status, again.body.error.code], [409, 'already_exists']);
    const feed = { name: `taken-${crypto.randomUUID().slice(0, 8)}` };
    assert.equal((await call(service, 'POST', `${project()}/feeds`, { token: as.token(), json: feed })).status, 201);
    const feedAgain = await call(service, 'POST', `${project()}/feeds`, { token: as.token(), json: feed });
    assert.deepEqual([feedAgain.status, feedAgain.body.error.code], [409, 'already_exists']);
  });

  test('a paused feed answers feed_paused', async () => {
    const created = await call(service, 'POST', `${project()}/feeds`, { token: as.token(), json: { name: `paused-${crypto.randomUUID().slice(0, 8)}`, paused: true } });
    const published = await call(service, 'POST', `${project()}/feeds/${created.body.feed.id}/messages`, { token: as.token(), json: { n: 1 } });
    assert.deepEqual([published.status, published.body.error.code], [409, 'feed_paused']);
  });

  test('redelivering through a disabled webhook answers webhook_disabled', async () => {
    const hook = await call(service, 'POST', `${project()}/webhooks`, { token: as.token(), json: { name: `off-${crypto.randomUUID().slice(0, 8)}`, url: 'http://127.0.0.1:9/in', events: ['storage.file.updated'] } });
    assert.equal(hook.status, 201, JSON.stringify(hook.body));
    await call(service, 'POST', `/projects/${tenant.projectId}/storage/upload?path=codes/${crypto.randomUUID()}.txt`, { token: as.token(), body: 'x', headers: { 'content-type': 'application/octet-stream' } });
    const { body: { deliveries } } = await call(service, 'GET', `${project()}/webhooks/${hook.body.id}/deliveries`, { token: as.token() });
    assert.equal(deliveries.length, 1);
    assert.equal((await call(service, 'PUT', `${project()}/webhooks/${hook.body.id}`, { token: as.token(), json: { enabled: false } })).status, 200);
    const redeliver = await call(service, 'POST', `${project()}/webhooks/${hook.body.id}/deliveries/${deliveries[0].id}/redeliver`, { token: as.token() });
    assert.deepEqual([redeliver.status, redeliver.body.error.code], [409, 'webhook_disabled']);
  });

  test('a project with as many webhooks as it may have answers limit_reached', async () => {
    const t = await createTenant(service, 'full');
    const add = (i: number) => call(service, 'POST', `/accounts/projects/${t.projectId}/webhooks`, { token: t.apiKey, json: { name: `hook-${i}`, url: 'http://127.0.0.1:9/in', events: ['room.started'] } });
    let i = 0;
    for (let status = 201; status === 201; i++) status = (await add(i)).status;
    const refused = await add(i);
    assert.deepEqual([refused.status, refused.body.error.code], [409, 'limit_reached']);
    assert.match(refused.body.error.message, /at most \d+ webhooks/);
  });

  test('a sane X-Request-Id of the caller is kept: on the answer, in the error body, on the log lines', async () => {
    const id = `client-${crypto.randomUUID()}`;
    const missing = await call(service, 'GET', `${project()}/rooms/${crypto.randomUUID()}`, { token: as.token(), headers: { 'x-request-id': id } });
    assert.equal(missing.status, 404);
    assert.equal(missing.headers.get('x-request-id'), id);
    assert.equal(missing.body.error.request_id, id);
    const ok = await call(service, 'GET', `${project()}/rooms`, { token: as.token(), headers: { 'x-request-id': `${id}-2` } });
    assert.deepEqual([ok.status, ok.headers.get('x-request-id')], [200, `${id}-2`]);
    // A failure that is logged: the line names the request.
    const broken = await call(service, 'POST', `${project()}/rooms`, { token: as.token(), body: '{"name":', headers: { 'content-type': 'application/json', 'x-request-id': `${id}-3` } });
    assert.deepEqual([broken.status, broken.body.error.code, broken.body.error.request_id], [400, 'invalid_json', `${id}-3`]);
  });

  test('an id that is not sane is replaced by a new one; every kind of answer names one', async () => {
    for (const bad of ['x'.repeat(129), 'two words', 'line\u00e9', '']) {
      const r = await call(service, 'GET', `${project()}/rooms`, { token: as.token(), headers: { 'x-request-id': bad } });
      assert.match(r.headers.get('x-request-id') ?? '', UUID, JSON.stringify(bad));
    }
    const answers = await Promise.all([
      call(service, 'GET', '/no/such/route'),
      call(service, 'GET', `${project()}/rooms`),
      call(service, 'GET', '/.well-known/openid-configuration'),
      call(service, 'GET', '/oauth/jwks'),
    ]);
    const ids = answers.map((r) => r.headers.get('x-request-id'));
    for (const id of ids) assert.match(id ?? '', UUID);
    assert.equal(new Set(ids).size, ids.length, 'one id per request');
    assert.equal(answers[0]!.body.error.request_id, ids[0]);
    assert.equal(answers[1]!.body.error.request_id, ids[1]);
  });

  test('log lines written while serving a request carry its id', async () => {
    const id = `traced-${crypto.randomUUID()}`;
    await call(service, 'GET', `${project()}/rooms?traced=1`, { token: as.token(), headers: { 'x-request-id': id } });
    const line = logged.find((l) => typeof l.msg === 'string' && l.msg.startsWith(`GET ${project()}/rooms?traced=1 200`));
    assert.ok(line, 'the request\'s line was logged');
    assert.equal(line.request_id, id);
  });
});
