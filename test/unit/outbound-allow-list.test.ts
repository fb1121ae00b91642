// ATRIUM_WEBHOOKS_ALLOW_PRIVATE as a list: the addresses, CIDR ranges and host names an operator
// names are reachable, every other private target stays refused, at registration and on connect.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { BlockedAddressError, checkTargetUrl, OutboundClient, urlProblem } from '../../src/platform/http/outbound.ts';

let server: Server;
let port: number;
before(async () => {
  server = createServer((_req, res) => res.end('ok'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

const problem = (url: string, allowPrivate: string[]) => urlProblem(new URL(url), { allowPrivate });

test('listed addresses and ranges are allowed, other private addresses are not', () => {
  const list = ['127.0.0.1', '10.1.0.0/16', 'fd00::/8'];
  for (const url of ['http://127.0.0.1:8080/', 'http://10.1.2.3/', 'http://[fd12::1]/', 'https://hooks.example.com/']) assert.equal(problem(url, list), undefined, url);
  for (const url of ['http://127.0.0.2/', 'http://10.2.0.1/', 'http://169.254.169.254/', 'http://[::1]/', 'http://0.0.0.0/', 'http://[::ffff:169.254.169.254]/']) {
    assert.match(problem(url, list) ?? '', /not allowed by ATRIUM_WEBHOOKS_ALLOW_PRIVATE/, url);
  }
  assert.match(problem('http://127.0.0.1/', []) ?? '', /private, loopback or reserved/);
});

test('a listed host name may resolve to a private address; the same address by another name may not', async () => {
  assert.equal(await checkTargetUrl(new URL(`http://localhost:${port}/`), { allowPrivate: ['localhost'] }), undefined);
  assert.match(await checkTargetUrl(new URL(`http://localhost:${port}/`), { allowPrivate: ['10.0.0.0/8'] }) ?? '', /resolves to/);
  assert.match(await checkTargetUrl(new URL(`http://127.0.0.1:${port}/`), { allowPrivate: ['localhost'] }) ?? '', /points at 127\.0\.0\.1/);
});

test('deliveries connect to listed targets only', async () => {
  const post = (client: OutboundClient, url: string) => client.post(new URL(url), Buffer.from('{}'), { 'content-type': 'application/json' }, { timeoutMs: 5000, excerptBytes: 10 });
  const byAddress = new OutboundClient({ allowPrivate: ['127.0.0.1'] });
  const byName = new OutboundClient({ allowPrivate: ['localhost'] });
  const none = new OutboundClient({ allowPrivate: false });
  const otherRange = new OutboundClient({ allowPrivate: ['10.0.0.0/8'] });
  try {
    assert.equal((await post(byAddress, `http://127.0.0.1:${port}/hook`)).status, 200);
    assert.equal((await post(byName, `http://localhost:${port}/hook`)).status, 200);
    await assert.rejects(post(none, `http://127.0.0.1:${port}/hook`), BlockedAddressError);
    // Checked again after DNS, at connect time: a name not listed that resolves to a private address.
    await assert.rejects(post(otherRange, `http://localhost:${port}/hook`), (error: Error) => /refused|resolved/.test(String((error as { cause?: Error }).cause?.message ?? error.message)));
  } finally {
    for (const client of [byAddress, byName, none, otherRange]) client.close();
  }
});
