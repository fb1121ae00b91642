// The service's asymmetric signing keys, shared by every instance through the database (private
// halves encrypted). Tokens we issue carry the key id in their header; room servers verify them
// offline against the public keys published at /.well-known/jwks.json.
//
// Rotation without downtime: `atrium keys rotate` adds a key (`rotateSigningKey`). Every instance
// re-reads the keys every ATRIUM_KEY_REFRESH_SECONDS and signs with the newest from then on (the
// OAuth provider included, through `onChange`); a token naming a key id an instance does not know
// yet makes it re-read at once, so a token signed with the new key verifies everywhere at once.
// Older keys stay published and accepted until they have been superseded for longer than any token
// lives (ATRIUM_KEY_RETIRE_AFTER_DAYS); a schedule then retires them (`retireSupersededKeys`).
import { createPrivateKey, randomUUID, sign, type KeyObject } from 'node:crypto';
import { desc, isNull, sql } from 'drizzle-orm';
import { jsonb, pgTable, text } from 'drizzle-orm/pg-core';
import { derToJose } from 'ecdsa-sig-formatter';
import { timestamptz } from '../db/columns.ts';
import { exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK } from 'jose';
import { ConfigError } from '../config-error.ts';
import type { Db } from '../db/engine.ts';
import type { SealedColumns } from './sealed.ts';
import type { SecretBox } from './secrets.ts';

export const signingKeysTable = pgTable('signing_keys', {
  kid: text('kid').primaryKey(),
  alg: text('alg').notNull(),
  publicJwk: jsonb('public_jwk').$type<JWK>().notNull(),
  privateJwkEncrypted: text('private_jwk_encrypted').notNull(),
  createdAt: timestamptz('created_at').notNull().defaultNow(),
  retiredAt: timestamptz('retired_at'),
});

/** The signing keys' private halves, sealed under ATRIUM_SECRET_KEY. */
export const signingKeysSealed: SealedColumns = { table: signingKeysTable, columns: [signingKeysTable.privateJwkEncrypted] };

export const SIGNING_ALG = 'ES256';

const FIRST_KEY_LOCK = 72_616_001; // advisory lock id, next to the migrations' one

function activeKeys(db: Db): Promise<KeyRow[]> {
  return db.select().from(signingKeysTable).where(isNull(signingKeysTable.retiredAt)).orderBy(desc(signingKeysTable.createdAt));
}

export interface SigningKey {
  kid: string;
  alg: string;
  privateKey: KeyObject;
  publicJwk: JWK;
}

/** The digest node:crypto signs with for each JWS algorithm we issue keys for. */
const NODE_SIGNING: Record<string, { digest: string }> = {
  ES256: { digest: 'sha256' },
};

type KeyRow = typeof signingKeysTable.$inferSelect;

/** A new key pair as a row to insert (private half encrypted). */
async function newKeyRow(box: SecretBox): Promise<typeof signingKeysTable.$inferInsert> {
  const { publicKey, privateKey } = await generateKeyPair(SIGNING_ALG, { extractable: true });
  const kid = randomUUID();
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: SIGNING_ALG, use: 'sig' };
  const privateJwk = { ...(await exportJWK(privateKey)), kid, alg: SIGNING_ALG, use: 'sig' };
  return { kid, alg: SIGNING_ALG, publicJwk, privateJwkEncrypted: box.encrypt(JSON.stringify(privateJwk)) };
}

/** Adds a signing key that every instance signs with from its next refresh on; its key id. */
export async function rotateSigningKey(db: Db, box: SecretBox, now: Date = new Date()): Promise<string> {
  const row = await newKeyRow(box);
  await db.insert(signingKeysTable).values({ ...row, createdAt: now });
  return row.kid;
}

/**
 * Retires keys superseded (a newer key exists) for longer than `retireAfterMs` before `now`: they
 * leave the JWKS and no longer verify. The newest key is never retired. Returns the retired ids.
 */
export async function retireSupersededKeys(db: Db, retireAfterMs: number, now: Date = new Date()): Promise<string[]> {
  const cutoff = new Date(now.getTime() - retireAfterMs).toISOString();
  const rows = await db.execute(sql`
    update signing_keys k set retired_at = ${now.toISOString()}::timestamptz
    where k.retired_at is null
      and exists (select 1 from signing_keys newer where newer.created_at > k.created_at and newer.created_at <= ${cutoff}::timestamptz)
    returning k.kid`);
  return (Array.isArray(rows) ? rows : (rows as { rows: { kid: string }[] }).rows).map((r: { kid: string }) => r.kid);
}

export class SigningKeys {
  readonly #db: Db;
  readonly #box: SecretBox;
  #current: SigningKey | undefined;
  #rows: KeyRow[] = [];
  #verifyKeys = new Map<string, CryptoKey>();
  #listeners: (() => Promise<void>)[] = [];
  #timer: NodeJS.Timeout | undefined;
  #refreshing: Promise<void> | undefined;
  #lastMiss = 0;

  constructor(db: Db, box: SecretBox) {
    this.#db = db;
    this.#box = box;
  }

  /** Loads the keys, creating the first one on an empty database. */
  async load(): Promise<void> {
    const rows = await this.#db.transaction(async (tx) => {
      // Instances booting together on an empty database must agree on one first key.
      await tx.execute(sql`select pg_advisory_xact_lock(${FIRST_KEY_LOCK})`);
      const existing = await activeKeys(tx);
      if (existing.length > 0) return existing;
      await tx.insert(signingKeysTable).values(await newKeyRow(this.#box));
      return activeKeys(tx);
    });
    await this.#apply(rows);
  }

  async #apply(rows: KeyRow[]): Promise<void> {
    const newest = rows[0]!;
    let privateJwk: string;
    try {
      privateJwk = this.#box.decrypt(newest.privateJwkEncrypted);
    } catch {
      throw new ConfigError(
        'The signing keys stored in the database cannot be decrypted with this secret key. Every instance sharing ' +
        'a database needs the same ATRIUM_SECRET_KEY (or, embedded, the secret.key file of its data dir). After changing ' +
        'it, list the previous key in ATRIUM_SECRET_KEY_FALLBACKS until `atrium keys reencrypt` has run.',
      );
    }
    if (!NODE_SIGNING[newest.alg]) throw new ConfigError(`The newest signing key uses ${newest.alg}, which this version cannot sign with`);
    const verifyKeys = new Map(await Promise.all(rows.map(async (r) => [r.kid, (await importJWK(r.publicJwk, r.alg)) as CryptoKey] as const)));
    this.#current = {
      kid: newest.kid,
      alg: newest.alg,
      privateKey: createPrivateKey({ key: JSON.parse(privateJwk) as JWK & { kty: string }, format: 'jwk' }),
      publicJwk: newest.publicJwk,
    };
    this.#rows = rows;
    this.#verifyKeys = verifyKeys;
  }

  /** Re-reads the keys; when they changed, applies them and tells the listeners (the OAuth provider). */
  refresh(): Promise<void> {
    this.#refreshing ??= (async () => {
      try {
        const rows = await activeKeys(this.#db);
        const same = rows.length === this.#rows.length && rows.every((r, i) => r.kid === this.#rows[i]?.kid);
        if (rows.length === 0 || same) {
                return;
        }
        await this.#apply(rows);
        for (const listener of this.#listeners) await listener();
      } finally {
        this.#refreshing = undefined;
      }
    })();
    return this.#refreshing;
  }

  /** Re-reads the keys every `intervalMs` until `stop()`; failures are reported, not thrown. */
  start(intervalMs: number, onError: (error: unknown) => void): void {
    this.stop();
    this.#timer = setInterval(() => void this.refresh().catch(onError), intervalMs);
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** Called after the keys changed. */
  onChange(listener: () => Promise<void>): void {
    this.#listeners.push(listener);
  }

  get current(): SigningKey {
    if (!this.#current) throw new Error('signing keys not loaded');
    return this.#current;
  }

  /**
   * A compact JWT of `claims` signed with the current key (header: alg, kid, typ). Built with
   * node:crypto directly: synchronous, where jose's WebCrypto signing costs a thread-pool round
   * trip and a structured clone per token. Verifiers read it with any JWT library.
   */
  signJwt(claims: Record<string, unknown>): string {
    const key = this.current;
    const { digest } = NODE_SIGNING[key.alg]!;
    const header = Buffer.from(JSON.stringify({ alg: key.alg, kid: key.kid, typ: 'JWT' })).toString('base64url');
    const input = `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
    // Signed with the bare KeyObject (a DER signature), then turned into JWS's raw r‖s: Node 24 takes
    // ~40 µs for that sign, against ~105 µs for `{ key, dsaEncoding: 'ieee-p1363' }`, which makes
    // it prepare the key again on every call (measured on this machine, 20,000 signatures each).
    return `${input}.${derToJose(sign(digest, Buffer.from(input), key.privateKey), key.alg)}`;
  }

  /** Private JWKs, newest first, for the OAuth provider's own signing (it signs with the first). */
  privateJwks(): Promise<JWK[]> {
    return activeKeys(this.#db).then((rows) => rows.map((r) => JSON.parse(this.#box.decrypt(r.privateJwkEncrypted)) as JWK));
  }

  jwks(): { keys: JWK[] } {
    return { keys: this.#rows.map((r) => r.publicJwk) };
  }

  /**
   * The key to verify a token naming `kid`; a key id this instance does not know yet (another
   * instance has just rotated) makes it re-read the keys first, at most once a second.
   */
  async findVerifyKey(kid: string): Promise<CryptoKey | undefined> {
    const known = this.#verifyKeys.get(kid);
    if (known || Date.now() - this.#lastMiss < 1000) return known;
    this.#lastMiss = Date.now();
    await this.refresh();
    return this.#verifyKeys.get(kid);
  }
}
