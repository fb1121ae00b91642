// ATRIUM_TRUST_PROXY decides which X-Forwarded-For hops make the client address (rate limits, logs).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Fastify from 'fastify';
import { fastifyTrustProxy } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';

async function ipSeen(setting: string, remoteAddress: string, forwardedFor?: string): Promise<string> {
  const config = loadConfig({ ATRIUM_TRUST_PROXY: setting, ATRIUM_EMAIL_LOGIN: 'false' });
  const app = Fastify({ trustProxy: fastifyTrustProxy(config.trustProxy) });
  app.get('/', async (request) => ({ ip: request.ip }));
  try {
    const res = await app.inject({ method: 'GET', url: '/', remoteAddress, headers: forwardedFor ? { 'x-forwarded-for': forwardedFor } : {} });
    return (res.json() as { ip: string }).ip;
  } finally {
    await app.close();
  }
}

test('false: the socket address, whatever the client forwards', async () => {
  assert.equal(await ipSeen('false', '198.51.100.7', '203.0.113.1'), '198.51.100.7');
});

test('a hop count believes only that many proxies: the client cannot prepend its own address', async () => {
  // One load balancer appends the real client; what the client claimed stays to the left.
  assert.equal(await ipSeen('1', '10.0.0.2', '6.6.6.6, 203.0.113.9'), '203.0.113.9');
  assert.equal(await ipSeen('2', '10.0.0.2', '6.6.6.6, 203.0.113.9, 10.0.0.3'), '203.0.113.9');
  assert.equal(await ipSeen('1', '10.0.0.2'), '10.0.0.2');
});

test('addresses and CIDR ranges: hops from listed proxies are believed, the first other one is the client', async () => {
  assert.equal(await ipSeen('10.0.0.0/8,192.168.1.7', '10.0.0.2', '6.6.6.6, 203.0.113.9, 192.168.1.7'), '203.0.113.9');
  // A request straight from an unlisted address: its X-Forwarded-For is ignored.
  assert.equal(await ipSeen('10.0.0.0/8', '198.51.100.7', '203.0.113.1'), '198.51.100.7');
});

test('true believes every hop (documented as spoofable), and bad values are refused', async () => {
  assert.equal(await ipSeen('true', '10.0.0.2', '6.6.6.6, 203.0.113.9'), '6.6.6.6');
  assert.throws(() => loadConfig({ ATRIUM_TRUST_PROXY: '10.0.0.0/33' }), /ATRIUM_TRUST_PROXY.*prefix length/);
  assert.throws(() => loadConfig({ ATRIUM_TRUST_PROXY: 'proxy.internal' }), /ATRIUM_TRUST_PROXY.*not an IP address/);
});
