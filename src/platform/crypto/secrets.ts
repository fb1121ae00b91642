// Hashing of high-entropy credentials, encryption of secrets the service must use again later, and
// the key that encrypts them.
import { createCipheriv, createDecipheriv, createHash, createSecretKey, randomBytes, timingSafeEqual, type KeyObject } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Random URL-safe secret with `bytes` of entropy. */
export function randomSecret(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/** SHA-256 of a credential secret. Enough for high-entropy secrets, and cheap on the hot path. */
export function hashSecret(secret: string): Buffer {
  return createHash('sha256').update(secret).digest();
}

export function secretMatches(secret: string, hash: Uint8Array): boolean {
  const candidate = hashSecret(secret);
  return candidate.length === hash.length && timingSafeEqual(candidate, hash);
}

export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/**
 * AES-256-GCM box for stored secrets: `v1.<iv>.<tag>.<ciphertext>`, all base64url. It seals under
 * the current key and opens under it or a fallback: a key being replaced, whose boxes
 * `atrium keys reencrypt` seals again under the current one (`reseal`).
 */
export class SecretBox {
  // KeyObjects rather than the raw bytes: Node imports raw key bytes on every cipher it creates
  // (about 30 µs); a KeyObject is imported once (a decryption then takes about 5 µs).
  readonly #key: KeyObject;
  readonly #fallbacks: readonly KeyObject[];

  constructor(key: Buffer, fallbacks: readonly Buffer[] = []) {
    if (key.length !== 32 || fallbacks.some((k) => k.length !== 32)) throw new Error('secret key must be 32 bytes');
    this.#key = createSecretKey(key);
    this.#fallbacks = fallbacks.filter((k) => !k.equals(key)).map((k) => createSecretKey(k));
  }

  encrypt(plaintext: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.');
  }

  decrypt(box: string): string {
    return this.#open(box).plaintext;
  }

  /** The box sealed again under the current key when a fallback sealed it; undefined when the current key did. Throws when no key opens it. */
  reseal(box: string): string | undefined {
    const { plaintext, current } = this.#open(box);
    return current ? undefined : this.encrypt(plaintext);
  }

  #open(box: string): { plaintext: string; current: boolean } {
    const [version, iv, tag, body] = box.split('.');
    if (version !== 'v1' || !iv || !tag || body === undefined) throw new Error('unrecognised encrypted secret');
    const open = (key: KeyObject) => {
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
    };
    // GCM's tag tells a wrong key apart: try the current key, then each fallback.
    for (const [i, key] of [this.#key, ...this.#fallbacks].entries()) {
      try {
        return { plaintext: open(key), current: i === 0 };
      } catch {
        // not this key
      }
    }
    throw new Error('an encrypted secret opens under neither ATRIUM_SECRET_KEY nor ATRIUM_SECRET_KEY_FALLBACKS');
  }
}

const decodeKey = (written: string) => Buffer.from(written, written.includes('-') || written.includes('_') ? 'base64url' : 'base64');

/**
 * The encryption key: ATRIUM_SECRET_KEY when set (required to share secrets between instances), else
 * a key generated once in the data dir with mode 0600.
 */
export function loadSecretKey(configured: string | undefined, dataDir: string): Buffer {
  if (configured) return decodeKey(configured);
  const file = join(dataDir, 'secret.key');
  if (!existsSync(file)) {
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(file, randomBytes(32).toString('base64'), { mode: 0o600, flag: 'wx' });
  }
  chmodSync(file, 0o600);
  return Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
}

/** The current key (`loadSecretKey`) and the fallbacks still accepted while it replaces them (ATRIUM_SECRET_KEY_FALLBACKS). */
export function loadSecretKeys(config: { readonly secretKey: string | undefined; readonly secretKeyFallbacks: readonly string[]; readonly dataDir: string }): { current: Buffer; fallbacks: Buffer[] } {
  const current = loadSecretKey(config.secretKey, config.dataDir);
  return { current, fallbacks: config.secretKeyFallbacks.map(decodeKey).filter((key) => !key.equals(current)) };
}
