// oidc-provider's storage adapter driven directly, on both engines (the flows through the provider
// are in oauth-security.test.ts): what it stores and finds, expiry, the consume race and the grant
// it revokes, text PostgreSQL cannot hold, and the client cache.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { eq } from 'drizzle-orm';
import type { AdapterPayload } from 'oidc-provider';
import { oauthClientsTable } from '../../src/modules/oauth-clients/store.ts';
import { adapterClass } from '../../src/modules/oauth/adapter.ts';
import { revokeAccount } from '../../src/modules/oauth/store.ts';
import { insertClient } from '../support/oauth.ts';
import { createTenant, forEachEngine, startTestService, type Tenant, type TestService } from '../support/service.ts';

forEachEngine('oauth storage adapter', (engine) => {
  let service: TestService;
  let tenant: Tenant;
  before(async () => {
    service = await startTestService(engine);
    tenant = await createTenant(service, 'adapter');
  });
  after(() => service?.stop());

  const adapter = (model: string, cacheMs = 0) => new (adapterClass(service.ctx.db, cacheMs))(model);

  test('stores and finds a model by id, uid and user code, each model apart; re-saving replaces the payload; destroy removes it', async () => {
    const sessions = adapter('Session');
    const id = randomUUID();
    const uid = randomUUID();
    await sessions.upsert(id, { uid, accountId: 'acc-1', kind: 'Session' }, 60);
    assert.deepEqual(await sessions.find(id), { uid, accountId: 'acc-1', kind: 'Session' });
    assert.deepEqual(await sessions.findByUid(uid), { uid, accountId: 'acc-1', kind: 'Session' });
    assert.equal(await adapter('Interaction').find(id), undefined, 'another model with the same id is not it');
    assert.equal(await adapter('Interaction').findByUid(uid), undefined);

    await sessions.upsert(id, { uid, accountId: 'acc-1', kind: 'Session', extra: 1 }, 60);
    assert.deepEqual(await sessions.find(id), { uid, accountId: 'acc-1', kind: 'Session', extra: 1 });

    const devices = adapter('DeviceCode');
    const code = randomUUID();
    await devices.upsert(code, { userCode: 'ABCD-EFGH', grantId: 'g-device' }, 60);
    assert.deepEqual(await devices.findByUserCode('ABCD-EFGH'), { userCode: 'ABCD-EFGH', grantId: 'g-device' });
    assert.equal(await devices.findByUserCode('ABCD-EFGX'), undefined);

    await sessions.destroy(id);
    assert.equal(await sessions.find(id), undefined);
    assert.equal(await sessions.findByUid(uid), undefined);
  });

  test('an expired model is not found; one saved without expiry does not expire', async () => {
    const codes = adapter('AuthorizationCode');
    const old = randomUUID();
    const forever = randomUUID();
    await codes.upsert(old, { grantId: 'g-old' }, 1);
    await codes.upsert(forever, { grantId: 'g-forever' }, 0);
    assert.deepEqual(await codes.find(old), { grantId: 'g-old' });
    await new Promise((resolve) => setTimeout(resolve, 1100));
    assert.equal(await codes.find(old), undefined);
    assert.deepEqual(await codes.find(forever), { grantId: 'g-forever' });
  });

  test('consume: the first redemption wins and is marked consumed; a second revokes the whole grant', async () => {
    const codes = adapter('AuthorizationCode');
    const grants = adapter('Grant');
    const tokens = adapter('RefreshToken');
    const grantId = randomUUID();
    const code = randomUUID();
    const token = randomUUID();
    await grants.upsert(grantId, { accountId: 'acc-2' }, 60);
    await codes.upsert(code, { grantId }, 60);
    await tokens.upsert(token, { grantId }, 60);
    const otherGrant = randomUUID();
    const otherCode = randomUUID();
    await codes.upsert(otherCode, { grantId: otherGrant }, 60);

    await codes.consume(code);
    const consumed = await codes.find(code);
    assert.equal(typeof consumed?.consumed, 'number', 'a consumed code says when');
    assert.ok(Math.abs((consumed!.consumed as number) - Date.now() / 1000) < 60);
    assert.equal((await codes.find(otherCode))?.consumed, undefined, 'another code is untouched');
    await codes.upsert(code, { grantId }, 60);
    assert.equal(typeof (await codes.find(code))?.consumed, 'number', 're-saving does not make it redeemable again');

    await assert.rejects(codes.consume(code), (error: Error & { error?: string; error_detail?: string }) => error.error === 'invalid_grant' && /grant already used/.test(error.error_detail ?? ''));
    assert.equal(await grants.find(grantId), undefined, 'the grant is revoked');
    assert.equal(await tokens.find(token), undefined, 'and its refresh token');
    assert.equal(await codes.find(code), undefined, 'and its code');
    assert.deepEqual(await codes.find(otherCode), { grantId: otherGrant }, 'another grant is untouched');
  });

  test('concurrent redemptions: exactly one wins; a replayed refresh token says so', async () => {
    const codes = adapter('AuthorizationCode');
    const code = randomUUID();
    await codes.upsert(code, { grantId: randomUUID() }, 60);
    const results = await Promise.allSettled(Array.from({ length: 5 }, () => codes.consume(code)));
    assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);

    const tokens = adapter('RefreshToken');
    const token = randomUUID();
    await tokens.upsert(token, { grantId: randomUUID() }, 60);
    await tokens.consume(token);
    await assert.rejects(tokens.consume(token), (error: Error & { error_detail?: string }) => /refresh token already used/.test(error.error_detail ?? ''));
    await assert.rejects(codes.consume(randomUUID()), (error: Error & { error?: string }) => error.error === 'invalid_grant', 'an unknown artefact is not redeemable either');
  });

  test('only text ids are indexed: a grant, account, uid or user code of another type finds and revokes nothing', async () => {
    const tokens = adapter('AccessToken');
    const sessions = adapter('Session');
    const odd = randomUUID();
    // Not what the provider writes, but what the adapter must not index if it ever did.
    const numbers = (payload: Record<string, unknown>) => payload as AdapterPayload;
    await tokens.upsert(odd, numbers({ grantId: 4242, accountId: 4242 }), 60);
    await sessions.upsert(odd, numbers({ uid: 4242, userCode: 4242 }), 60);
    await tokens.revokeByGrantId('4242');
    await revokeAccount(service.ctx.db, '4242');
    assert.deepEqual(await tokens.find(odd), { grantId: 4242, accountId: 4242 });
    assert.equal(await sessions.findByUid('4242'), undefined);
    assert.equal(await sessions.findByUserCode('4242'), undefined);

    const named = randomUUID();
    await tokens.upsert(named, { grantId: 'g-named', accountId: 'acc-named' }, 60);
    await revokeAccount(service.ctx.db, 'acc-named');
    assert.equal(await tokens.find(named), undefined, 'a text account id is indexed: signing the account out removes it');
  });

  test('revokeByGrantId removes that model\'s artefacts of the grant only', async () => {
    const tokens = adapter('AccessToken');
    const codes = adapter('AuthorizationCode');
    const grantId = randomUUID();
    const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
    await tokens.upsert(a, { grantId }, 60);
    await tokens.upsert(b, { grantId: randomUUID() }, 60);
    await codes.upsert(c, { grantId }, 60);
    await tokens.revokeByGrantId(grantId);
    assert.equal(await tokens.find(a), undefined);
    assert.ok(await tokens.find(b));
    assert.ok(await codes.find(c), 'another model of the same grant stays');
  });

  test('text PostgreSQL cannot hold: as a key it finds nothing, in a payload it is an invalid request', async () => {
    const sessions = adapter('Session');
    for (const bad of ['a\0b', 'x\ud800y']) {
      assert.equal(await sessions.find(bad), undefined);
      assert.equal(await sessions.findByUid(bad), undefined);
      assert.equal(await sessions.findByUserCode(bad), undefined);
      for (const payload of [{ state: bad }, { state: 'ok', nonce: bad }, { list: ['ok', bad] }, { nested: { ok: 1, deep: bad } }, { ok: 1, [bad]: 1 }]) {
        await assert.rejects(sessions.upsert(randomUUID(), payload, 60), (error: Error & { error?: string }) => error.error === 'invalid_request', JSON.stringify(payload));
      }
    }
    const fine = randomUUID();
    await sessions.upsert(fine, { state: 'ok', n: 1, flag: true, none: null, list: ['a'], nested: { deep: 'é' } }, 60);
    assert.deepEqual(await sessions.find(fine), { state: 'ok', n: 1, flag: true, none: null, list: ['a'], nested: { deep: 'é' } });
  });

  test('clients come from the oauth_clients table, cached for the given time; the provider may not write them', async () => {
    const client = await insertClient(service, tenant.projectId, { name: 'Cached App' });
    const uncached = adapter('Client', 0);
    const cached = adapter('Client', 60_000);
    assert.equal((await uncached.find(client.clientId))?.client_id, client.clientId);
    assert.equal((await cached.find(client.clientId))?.client_id, client.clientId);
    assert.equal(await cached.find('no-such-client'), undefined);
    await service.ctx.db.delete(oauthClientsTable).where(eq(oauthClientsTable.clientId, client.clientId));
    assert.equal(await uncached.find(client.clientId), undefined, 'without a cache, a deleted client is gone at once');
    assert.equal((await cached.find(client.clientId))?.client_id, client.clientId, 'within the cache time the metadata is reused');
    await assert.rejects(cached.upsert(client.clientId, { client_id: client.clientId }, 0), /managed through the Atrium API/);
  });
});
