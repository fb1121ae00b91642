// oidc-provider's storage adapter over our database (both engines). One table holds every model;
// clients come from the project-owned oauth_clients table.
//
// The one subtle part is `consume`: the library reads an authorization code or refresh token,
// checks its `consumed` flag, then calls `consume()` and ignores the result. A read-then-write
// adapter would let N concurrent redemptions all pass the check. Here `consume` is a conditional
// update, and the loser of the race is treated as a replay: the whole grant is revoked (RFC 6749
// §4.1.2, RFC 9700 §4.14.2) and the request fails with invalid_grant.
//
// Lookup keys and payloads come from requests (client ids, codes, tokens, user codes, state and
// nonce values). Text PostgreSQL cannot hold — a NUL, a lone UTF-16 surrogate — never reaches a
// query: as a key it names nothing (not found), in a payload it makes the request invalid.
import { LRUCache } from 'lru-cache';
import { errors, type Adapter, type AdapterPayload } from 'oidc-provider';
import type { Db } from '../../platform/db/engine.ts';
import { findOAuthClient } from '../oauth-clients/service.ts';
import { clientMetadata } from './clients.ts';
import * as store from './store.ts';

const epoch = (date: Date) => Math.floor(date.getTime() / 1000);

/** A grant that went: by the library's revocation (`revoked`), or here, for a code or token used twice (`replayed`). */
export interface GrantRevocation {
  readonly grantId: string;
  readonly clientId: string | undefined;
  readonly accountId: string | undefined;
  readonly replayed: boolean;
}

/** Records a grant's revocation in the transaction that deletes it. */
export type OnGrantRevoked = (tx: Db, revocation: GrantRevocation) => Promise<void>;

const text = (value: unknown) => (typeof value === 'string' ? value : undefined);

/**
 * `clientCacheMs`: how long a client's metadata is reused. Every token request looks its client up,
 * so this spares the hot path a query; a changed or deleted client takes effect within this time
 * (the same bound as ATRIUM_AUTH_CACHE_SECONDS for every other credential). `onRevoked` records a
 * grant's revocation with it.
 */
export function adapterClass(db: Db, clientCacheMs: number, onRevoked: OnGrantRevoked = async () => {}): new (model: string) => Adapter {
  const revoked = async (grantId: string, replayed: boolean, remove: (tx: Db) => Promise<Record<string, unknown> | undefined>) => {
    await db.transaction(async (tx) => {
      const grant = await remove(tx);
      if (grant) await onRevoked(tx, { grantId, clientId: text(grant.clientId), accountId: text(grant.accountId), replayed });
    });
  };
  const clients = clientCacheMs > 0 ? new LRUCache<string, { metadata: AdapterPayload | null }>({ max: 10_000, ttl: clientCacheMs }) : undefined;
  return class DbAdapter implements Adapter {
    readonly model: string;

    constructor(model: string) {
      this.model = model;
    }

    async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
      if (this.model === 'Client') throw new Error('clients are managed through the Atrium API, not the provider');
      if (!storable(payload)) throw new errors.InvalidRequest('request parameters must be text without NUL characters or unpaired surrogates');
      await store.upsertModel(db, {
        model: this.model,
        id,
        payload,
        grantId: typeof payload.grantId === 'string' ? payload.grantId : null,
        accountId: typeof payload.accountId === 'string' ? payload.accountId : null,
        uid: typeof payload.uid === 'string' ? payload.uid : null,
        userCode: typeof payload.userCode === 'string' ? payload.userCode : null,
        expiresAt: expiresIn ? new Date(Date.now() + expiresIn * 1000) : null,
      });
    }

    async find(id: string): Promise<AdapterPayload | undefined> {
      if (!storableText(id)) return undefined;
      if (this.model === 'Client') {
        const cached = clients?.get(id);
        if (cached) return cached.metadata ?? undefined;
        const row = await findOAuthClient(db, id);
        const metadata = row ? clientMetadata(row) : null;
        clients?.set(id, { metadata });
        return metadata ?? undefined;
      }
      return withConsumed(await store.findModel(db, this.model, id));
    }

    async findByUid(uid: string): Promise<AdapterPayload | undefined> {
      if (!storableText(uid)) return undefined;
      return withConsumed(await store.findModelBy(db, this.model, 'uid', uid));
    }

    async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
      if (!storableText(userCode)) return undefined;
      return withConsumed(await store.findModelBy(db, this.model, 'userCode', userCode));
    }

    async consume(id: string): Promise<void> {
      const { consumed, grantId } = await store.consumeModel(db, this.model, id);
      if (consumed) return;
      if (grantId) await revoked(grantId, true, (tx) => store.revokeGrant(tx, grantId));
      throw new errors.InvalidGrant(`${this.model === 'RefreshToken' ? 'refresh token' : 'grant'} already used`);
    }

    async destroy(id: string): Promise<void> {
      // The library destroys a grant only to revoke it (helpers/revoke.js).
      if (this.model === 'Grant') await revoked(id, false, (tx) => store.destroyGrant(tx, id));
      else await store.destroyModel(db, this.model, id);
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      await store.destroyByGrant(db, this.model, grantId);
    }
  };
}

function withConsumed(row: store.StoredModel | undefined): AdapterPayload | undefined {
  if (!row) return undefined;
  return row.consumedAt ? { ...row.payload, consumed: epoch(row.consumedAt) } : row.payload;
}

/** Text PostgreSQL's text and jsonb types accept. */
function storableText(value: string): boolean {
  return !value.includes('\0') && value.isWellFormed();
}

function storable(value: unknown): boolean {
  if (typeof value === 'string') return storableText(value);
  // Objects and arrays: every key and value; numbers, booleans and null have no entries.
  return Object.entries(value ?? {}).every(([key, v]) => storableText(key) && storable(v));
}
