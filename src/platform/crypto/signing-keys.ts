// The service's asymmetric signing keys, shared by every instance through the database (private
// halves encrypted). Tokens we issue carry the key id in their header; room servers verify them
// offline against the public keys published at /.well-known/jwks.json.
import { randomUUID } from 'node:crypto';
import { desc, isNull, sql } from 'drizzle-orm';
import { jsonb, pgTable, text } from 'drizzle-orm/pg-core';
import { timestamptz } from '../db/columns.ts';
import { exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK } from 'jose';
import { ConfigError } from '../../config.ts';
import type { Db } from '../db/engine.ts';
import type { SecretBox } from './secrets.ts';

export const signingKeysTable = pgTable('signing_keys', {
  kid: text('kid').primaryKey(),
  alg: text('alg').notNull(),
  publicJwk: jsonb('public_jwk').$type<JWK>().notNull(),
  privateJwkEncrypted: text('private_jwk_encrypted').notNull(),
  createdAt: timestamptz('created_at').notNull().defaultNow(),
  retiredAt: timestamptz('retired_at'),
});

export const SIGNING_ALG = 'ES256';

const FIRST_KEY_LOCK = 72_616_001; // advisory lock id, next to the migrations' one

function activeKeys(db: Db) {
  return db.select().from(signingKeysTable).where(isNull(signingKeysTable.retiredAt)).orderBy(desc(signingKeysTable.createdAt));
}

export interface SigningKey {
  kid: string;
  alg: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

export class SigningKeys {
  readonly #db: Db;
  readonly #box: SecretBox;
  #current: SigningKey | undefined;
  #publicJwks: JWK[] = [];
  #verifyKeys = new Map<string, CryptoKey>();

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
      const { publicKey, privateKey } = await generateKeyPair(SIGNING_ALG, { extractable: true });
      const kid = randomUUID();
      const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: SIGNING_ALG, use: 'sig' };
      const privateJwk = { ...(await exportJWK(privateKey)), kid, alg: SIGNING_ALG, use: 'sig' };
      await tx.insert(signingKeysTable).values({ kid, alg: SIGNING_ALG, publicJwk, privateJwkEncrypted: this.#box.encrypt(JSON.stringify(privateJwk)) });
      return activeKeys(tx);
    });
    const newest = rows[0]!;
    let privateJwk: string;
    try {
      privateJwk = this.#box.decrypt(newest.privateJwkEncrypted);
    } catch {
      throw new ConfigError(
        'The signing keys stored in the database cannot be decrypted with this secret key. Every instance sharing ' +
        'a database needs the same ATRIUM_SECRET_KEY (or, embedded, the secret.key file of its data dir).',
      );
    }
    this.#current = {
      kid: newest.kid,
      alg: newest.alg,
      privateKey: (await importJWK(JSON.parse(privateJwk) as JWK, newest.alg)) as CryptoKey,
      publicJwk: newest.publicJwk,
    };
    this.#publicJwks = rows.map((r) => r.publicJwk);
    this.#verifyKeys = new Map(await Promise.all(rows.map(async (r) => [r.kid, (await importJWK(r.publicJwk, r.alg)) as CryptoKey] as const)));
  }

  get current(): SigningKey {
    if (!this.#current) throw new Error('signing keys not loaded');
    return this.#current;
  }

  /** Private JWKs, for the OAuth provider's own signing. */
  privateJwks(): Promise<JWK[]> {
    return activeKeys(this.#db).then((rows) => rows.map((r) => JSON.parse(this.#box.decrypt(r.privateJwkEncrypted)) as JWK));
  }

  jwks(): { keys: JWK[] } {
    return { keys: this.#publicJwks };
  }

  verifyKey(kid: string): CryptoKey | undefined {
    return this.#verifyKeys.get(kid);
  }
}
