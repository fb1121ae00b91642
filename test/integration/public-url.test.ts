// Behind a load balancer or a cache, the request's Host and X-Forwarded-* headers are the client's
// to choose: every absolute URL comes from ATRIUM_PUBLIC_URL instead.
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, test } from 'node:test';
import { forEachEngine, startTestService, type TestService } from '../support/service.ts';

/** A GET with headers fetch() does not let one set (Host). */
function get(base: string, path: string, headers: Record<string, string>): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const url = new URL(path, base);
    const req = request({ host: url.hostname, port: url.port, path: url.pathname + url.search, headers, timeout: 10_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end();
  });
}

const HOSTILE: Record<string, string>[] = [
  { host: 'evil.example' },
  { host: 'evil.example', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'http', forwarded: 'host=evil.example;proto=http' },
];

forEachEngine('absolute URLs come from ATRIUM_PUBLIC_URL', (engine) => {
  for (const trustProxy of ['false', 'true']) {
    const PUBLIC = 'https://atrium.example.com';
    let service: TestService;
    before(async () => {
      service = await startTestService(engine, { ATRIUM_PUBLIC_URL: PUBLIC, ATRIUM_TRUST_PROXY: trustProxy });
    });
    after(() => service?.stop());

    test(`discovery documents name only the public URL, whatever Host says (ATRIUM_TRUST_PROXY=${trustProxy})`, async () => {
      for (const path of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server']) {
        const honest = await get(service.url, path, {});
        assert.equal(honest.status, 200);
        const expected = JSON.parse(honest.body) as Record<string, unknown>;
        const urls = Object.entries(expected).filter(([, v]) => typeof v === 'string' && /^https?:/.test(v));
        assert.ok(urls.length >= 5, 'the document has endpoints');
        for (const [name, value] of urls) assert.ok(String(value).startsWith(`${PUBLIC}/`) || value === PUBLIC, `${name}: ${value}`);
        assert.equal(expected.authorization_endpoint, `${PUBLIC}/oauth/authorize`);
        for (const headers of HOSTILE) {
          const evil = await get(service.url, path, headers);
          assert.equal(evil.status, 200);
          assert.doesNotMatch(evil.body, /evil\.example/);
          assert.deepEqual(JSON.parse(evil.body), expected);
        }
      }
    });

    test(`protocol redirects stay on the public URL (ATRIUM_TRUST_PROXY=${trustProxy})`, async () => {
      for (const headers of HOSTILE) {
        const res = await get(service.url, '/oauth/authorize?client_id=nope&response_type=code&redirect_uri=https%3A%2F%2Fapp.example%2Fcb&scope=openid', headers);
        assert.ok(res.status < 500, `answered ${res.status}`);
        assert.doesNotMatch(res.body, /evil\.example/);
        const location = res.headers.location;
        if (typeof location === 'string') assert.doesNotMatch(location, /evil\.example/);
        const jwks = await get(service.url, '/oauth/jwks', headers);
        assert.equal(jwks.status, 200);
      }
    });
  }
});
