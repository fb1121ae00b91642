// The box that encrypts stored secrets (webhook signing secrets, API-key secrets, upstream keys):
// AES-256-GCM with a fresh 96-bit IV for every encryption (GCM with a repeated IV under one key gives
// away the XOR of the plaintexts and lets anyone forge tags), in the documented `v1.<iv>.<tag>.<data>`
// form, opened here by node:crypto directly rather than by the box itself.
import assert from 'node:assert/strict';
import { createDecipheriv, randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { SecretBox } from '../../src/platform/crypto/secrets.ts';

const key = randomBytes(32);
const box = new SecretBox(key);

function openIndependently(sealed: string, withKey = key): string {
  const [version, iv, tag, data] = sealed.split('.');
  assert.equal(version, 'v1');
  const decipher = createDecipheriv('aes-256-gcm', withKey, Buffer.from(iv!, 'base64url'));
  decipher.setAuthTag(Buffer.from(tag!, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(data!, 'base64url')), decipher.final()]).toString('utf8');
}

test('every encryption has an IV of its own, 96 bits, and a 128-bit tag', () => {
  const ivs = new Set<string>();
  const boxes = new Set<string>();
  for (let i = 0; i < 2000; i += 1) {
    const sealed = box.encrypt('the same secret');
    const [, iv, tag] = sealed.split('.');
    assert.equal(Buffer.from(iv!, 'base64url').length, 12);
    assert.equal(Buffer.from(tag!, 'base64url').length, 16);
    ivs.add(iv!);
    boxes.add(sealed);
  }
  assert.equal(ivs.size, 2000, 'no IV is used twice');
  assert.equal(boxes.size, 2000, 'the same plaintext never gives the same box');
});

test('the box is AES-256-GCM under the key, as documented; it opens what it sealed', () => {
  for (const secret of ['', 'whsec_abc', 'ünïcødé ✓', 'x'.repeat(10_000)]) {
    const sealed = box.encrypt(secret);
    assert.equal(openIndependently(sealed), secret);
    assert.equal(box.decrypt(sealed), secret);
  }
});

test('a box altered in any part, or sealed under another key, does not open', () => {
  const sealed = box.encrypt('signing secret');
  const [version, iv, tag, data] = sealed.split('.') as [string, string, string, string];
  const flip = (part: string) => {
    const bytes = Buffer.from(part, 'base64url');
    bytes[0]! ^= 1;
    return bytes.toString('base64url');
  };
  for (const altered of [[version, flip(iv), tag, data], [version, iv, flip(tag), data], [version, iv, tag, flip(data)]]) {
    assert.throws(() => box.decrypt(altered.join('.')));
  }
  assert.throws(() => box.decrypt(['v2', iv, tag, data].join('.')), /unrecognised/);
  assert.throws(() => new SecretBox(randomBytes(32)).decrypt(sealed));
  assert.throws(() => new SecretBox(randomBytes(16)), /32 bytes/);
});

test('while the key changes, a box sealed under a fallback opens, and reseal moves it under the current key', () => {
  const old = randomBytes(32);
  const current = randomBytes(32);
  const sealedBefore = new SecretBox(old).encrypt('api key secret');
  const changing = new SecretBox(current, [old]);
  assert.equal(changing.decrypt(sealedBefore), 'api key secret', 'the fallback opens it');
  const moved = changing.reseal(sealedBefore)!;
  assert.notEqual(moved, undefined);
  assert.equal(openIndependently(moved, current), 'api key secret', 'sealed again under the current key');
  assert.equal(changing.reseal(moved), undefined, 'a box under the current key stays');
  assert.equal(openIndependently(changing.encrypt('new'), current), 'new', 'new boxes are sealed under the current key');
  assert.equal(new SecretBox(current).decrypt(moved), 'api key secret', 'once moved, the old key is not needed');
  assert.throws(() => new SecretBox(current).decrypt(sealedBefore), /neither ATRIUM_SECRET_KEY nor ATRIUM_SECRET_KEY_FALLBACKS/);
  assert.throws(() => changing.reseal(new SecretBox(randomBytes(32)).encrypt('x')), /neither/, 'a box no key opens is refused, not resealed');
  assert.throws(() => new SecretBox(current, [randomBytes(16)]), /32 bytes/);
});
