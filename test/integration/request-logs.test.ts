// With JSON logs, every answered request is one `info` line: method, the route's pattern (never the
// URL, whose query string may carry a secret), status, duration and the request's id, which every
// other line of the same request carries too.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import { call, createTenant, startTestService, type Tenant, type TestService } from '../support/service.ts';

describe('request logs in JSON [pglite]', () => {
  let service: TestService;
  let tenant: Tenant;
  const lines: Record<string, unknown>[] = [];
  before(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    const log = pino({ level: 'info' }, sink) as unknown as FastifyBaseLogger;
    service = await startTestService('pglite', { ATRIUM_LOG_FORMAT: 'json' }, { log });
    tenant = await createTenant(service, 'logs');
  });
  after(() => service?.stop());

  const requestLines = () => lines.filter((l) => l.msg === 'request');

  test('one info line per request, with method, route, status, duration and request id', async () => {
    const before = requestLines().length;
    const listed = await call(service, 'GET', `/accounts/projects/${tenant.projectId}/rooms?limit=5&filter=secret-looking-text`, { token: tenant.apiKey });
    assert.equal(listed.status, 200);
    const refused = await call(service, 'GET', `/accounts/projects/${tenant.projectId}/rooms`);
    assert.equal(refused.status, 401);
    const missing = await call(service, 'GET', '/no/such/path?token=abc');
    assert.equal(missing.status, 404);
    // The line is written when the answer has gone: wait for the third (a loaded machine is slow).
    for (let i = 0; i < 250 && requestLines().length < before + 3; i++) await new Promise((r) => setTimeout(r, 20));

    const [ok, unauthorized, unknown] = requestLines().slice(before);
    for (const [line, answer] of [[ok, listed], [unauthorized, refused], [unknown, missing]] as const) {
      assert.equal(line?.level, 30, 'info');
      assert.equal(typeof line?.duration_ms, 'number');
      // The line's id is the one the caller was answered with, under the documented label.
      assert.equal(line?.request_id, answer.headers.get('x-request-id'));
    }
    assert.deepEqual([ok!.method, ok!.route, ok!.status], ['GET', '/accounts/projects/:project_id/rooms', 200]);
    assert.deepEqual([unauthorized!.route, unauthorized!.status], ['/accounts/projects/:project_id/rooms', 401]);
    assert.deepEqual([unknown!.route, unknown!.status], ['/no/such/path', 404]);
    assert.ok(!JSON.stringify(lines).includes('secret-looking-text') && !JSON.stringify(lines).includes('token=abc'), 'no query string is logged');
    assert.notEqual(ok!.request_id, unauthorized!.request_id);
  });
});
