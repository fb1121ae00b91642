// Stopping the service (what SIGTERM does): a request already in flight is answered, and its
// keep-alive connection is closed once it goes idle, rather than holding the stop until the
// connection's keep-alive timeout (72 s) while a process manager waits. HTTP only, so one engine.
import assert from 'node:assert/strict';
import { Agent, request } from 'node:http';
import { test } from 'node:test';
import { createTenant, startTestService } from '../support/service.ts';

test('a stop lets the request in flight finish, then closes its keep-alive connection at once', async () => {
  const service = await startTestService('pglite', {}, { workers: () => [] });
  const tenant = await createTenant(service, 'shutdown');
  const agent = new Agent({ keepAlive: true });
  try {
    const { port } = new URL(service.url);
    const body = 'half of it, then the rest';
    // An upload whose body is still arriving when the stop begins: in flight, not idle.
    const upload = request({
      port, method: 'POST', path: `/projects/${tenant.projectId}/storage/upload?path=shutdown.txt`, agent,
      headers: { authorization: `Bearer ${tenant.apiKey}`, 'content-type': 'application/octet-stream', 'content-length': Buffer.byteLength(body) },
    });
    const answered = new Promise<{ status: number; text: string }>((resolve, reject) => {
      upload.on('response', (response) => {
        let text = '';
        response.setEncoding('utf8').on('data', (d: string) => { text += d; }).on('end', () => resolve({ status: response.statusCode ?? 0, text }));
      });
      upload.on('error', reject);
    });
    upload.write(body.slice(0, 10));
    await new Promise((resolve) => setTimeout(resolve, 200));

    const t0 = performance.now();
    const stopped = service.stop();
    upload.end(body.slice(10));
    const answer = await answered;
    assert.equal(answer.status, 200, answer.text);
    assert.equal(JSON.parse(answer.text).size, Buffer.byteLength(body), 'the whole body was taken');
    await stopped;
    const ms = performance.now() - t0;
    assert.ok(ms < 5_000, `stopped ${Math.round(ms)} ms after the stop began (the keep-alive connection was left open)`);
  } finally {
    agent.destroy();
  }
});
