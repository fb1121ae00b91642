// The sign-in forms' CSRF check on its own (the flows through real pages are in
// test/integration/oauth-security.test.ts): the cookie, the form token, and every refusal.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { test } from 'node:test';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Csrf } from '../../src/modules/oauth/csrf.ts';

const KEY = Buffer.alloc(32, 7);
const SECRET = 'a'.repeat(43);

function request(cookies: Record<string, string>, headers: Record<string, string> = {}): FastifyRequest {
  return { cookies, headers } as unknown as FastifyRequest;
}

function reply() {
  const set: { name: string; value: string; options: Record<string, unknown> }[] = [];
  return { set, reply: { setCookie: (name: string, value: string, options: Record<string, unknown>) => set.push({ name, value, options }) } as unknown as FastifyReply };
}

const sign = (secret: string) => createHmac('sha256', KEY).update(secret).digest('base64url');

test('the form token is the HMAC of the cookie; a browser without a valid cookie gets a new one', () => {
  const csrf = new Csrf([KEY], 'http://localhost:8000');
  const kept = reply();
  assert.equal(csrf.token(request({ atrium_csrf: SECRET }), kept.reply), sign(SECRET));
  assert.equal(kept.set.length, 0, 'a valid cookie is kept');

  const invalid: Record<string, string>[] = [{}, { atrium_csrf: 'short' }, { atrium_csrf: `${'a'.repeat(42)}!` }, { atrium_csrf: 'a'.repeat(44) }];
  for (const cookies of invalid) {
    const fresh = reply();
    const token = csrf.token(request(cookies), fresh.reply);
    assert.equal(fresh.set.length, 1, `a new cookie for ${JSON.stringify(cookies)}`);
    const [{ name, value, options }] = fresh.set as [{ name: string; value: string; options: Record<string, unknown> }];
    assert.equal(name, 'atrium_csrf');
    assert.match(value, /^[A-Za-z0-9_-]{43}$/);
    assert.notEqual(value, SECRET);
    assert.deepEqual(options, { path: '/', httpOnly: true, sameSite: 'lax', secure: false });
    assert.equal(token, sign(value));
  }
});

test('on https the cookie is __Host- prefixed and Secure', () => {
  const csrf = new Csrf([KEY], 'https://id.example.com/base');
  const fresh = reply();
  csrf.token(request({}), fresh.reply);
  assert.equal(fresh.set[0]!.name, '__Host-atrium_csrf');
  assert.equal(fresh.set[0]!.options.secure, true);
  assert.equal(csrf.verify(request({ '__Host-atrium_csrf': SECRET }, { origin: 'https://id.example.com' }), sign(SECRET)), true);
  assert.equal(csrf.verify(request({ atrium_csrf: SECRET }, { origin: 'https://id.example.com' }), sign(SECRET)), false, 'the plain name is not read on https');
});

test('verify: our own form in this browser passes; every other request is refused', () => {
  const csrf = new Csrf([KEY], 'http://localhost:8000');
  const cookies = { atrium_csrf: SECRET };
  const good = sign(SECRET);
  assert.equal(csrf.verify(request(cookies), good), true, 'no origin headers (older browsers)');
  assert.equal(csrf.verify(request(cookies, { origin: 'http://localhost:8000', 'sec-fetch-site': 'same-origin' }), good), true);
  assert.equal(csrf.verify(request(cookies, { origin: 'null' }), good), true, 'an opaque origin still needs the token');
  assert.equal(csrf.verify(request(cookies, { 'sec-fetch-site': 'same-site' }), good), true);

  assert.equal(csrf.verify(request(cookies, { 'sec-fetch-site': 'cross-site' }), good), false, 'a cross-site request');
  assert.equal(csrf.verify(request(cookies, { origin: 'http://evil.example' }), good), false, 'another origin');
  assert.equal(csrf.verify(request(cookies, { origin: 'http://localhost:8001' }), good), false, 'another port');
  assert.equal(csrf.verify(request({}), good), false, 'no cookie');
  assert.equal(csrf.verify(request(cookies), undefined), false, 'no token');
  assert.equal(csrf.verify(request(cookies), [good]), false, 'a token that is not text');
  assert.equal(csrf.verify(request(cookies), sign('b'.repeat(43))), false, 'the token of another cookie');
  assert.equal(csrf.verify(request(cookies), good.slice(0, -1)), false, 'a shorter token');
  assert.equal(csrf.verify(request(cookies), `${good}x`), false, 'a longer token');
  assert.equal(csrf.verify(request(cookies), ''), false, 'an empty token');
  assert.equal(new Csrf([Buffer.alloc(32, 8)], 'http://localhost:8000').verify(request(cookies), good), false, 'a token made with another key');
});

test('while the secret key changes, a token made under the old key still verifies; new tokens use the new one', () => {
  const NEW = Buffer.alloc(32, 9);
  const csrf = new Csrf([NEW, KEY], 'http://localhost:8000');
  const cookies = { atrium_csrf: SECRET };
  assert.equal(csrf.verify(request(cookies), sign(SECRET)), true, 'a form rendered before the change');
  const fresh = reply();
  const token = csrf.token(request(cookies), fresh.reply);
  assert.equal(token, createHmac('sha256', NEW).update(SECRET).digest('base64url'), 'signed with the first key');
  assert.equal(csrf.verify(request(cookies), token), true);
  assert.equal(new Csrf([NEW], 'http://localhost:8000').verify(request(cookies), sign(SECRET)), false, 'once the old key is gone, its tokens are not');
});
