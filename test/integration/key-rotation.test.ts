// Signing-key rotation without downtime: a key added by `atrium keys rotate` (rotateSigningKey) is
// signed with by every instance within ATRIUM_KEY_REFRESH_SECONDS (the OAuth provider included),
// tokens signed with it verify on every instance at once, tokens from before keep verifying while
// the old key is published, and retiring it (on an injected clock) takes it out of the JWKS.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { decodeProtectedHeader } from 'jose';
import { issueParticipantToken, validateParticipantToken } from '../../src/modules/participant-tokens/service.ts';
import { retireSupersededKeys, rotateSigningKey } from '../../src/platform/crypto/signing-keys.ts';
import { insertClient } from '../support/oauth.ts';
import { createTenant, forEachEngine, isolatedDatabase, startTestService, type Tenant, type TestService } from '../support/service.ts';

/** Retries `check` until it stops throwing, for at most `timeoutMs`. */
async function until(check: () => Promise<void>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

const kidOf = (token: string) => decodeProtectedHeader(token).kid;

forEachEngine('signing-key rotation', (engine) => {
  let instances: TestService[] = [];
  let drop: () => Promise<void> = async () => {};
  let tenant: Tenant;
  let machine: { clientId: string; clientSecret: string };
  before(async () => {
    const database = await isolatedDatabase(engine);
    drop = database.drop;
    // One public URL for all: it is the tokens' issuer and audience.
    const env = { ...database.env, ATRIUM_KEY_REFRESH_SECONDS: '1', ATRIUM_PUBLIC_URL: 'http://127.0.0.1:9' };
    instances.push(await startTestService(engine, env));
    if (engine === 'postgres') instances.push(await startTestService(engine, env));
    tenant = await createTenant(instances[0]!, 'rotation');
    machine = await insertClient(instances[0]!, tenant.projectId, { grantTypes: ['client_credentials'], redirectUris: [], scope: 'profile:read' });
  });
  after(async () => {
    for (const instance of instances) await instance.stop();
    instances = [];
    await drop();
  });

  const participantToken = (i: number) => issueParticipantToken(instances[i]!.ctx, { projectId: tenant.projectId, name: 'agent', grants: [{ name: 'room', scope: 'lobby' }] as never });
  const accessToken = async (i: number) => {
    const res = await fetch(`${instances[i]!.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${machine.clientId}:${machine.clientSecret}`).toString('base64')}` },
      body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'profile:read' }),
    });
    const body = (await res.json()) as { access_token?: string };
    assert.equal(res.status, 200, JSON.stringify(body));
    return body.access_token!;
  };
  const jwksKids = async (i: number, path: string) => ((await (await fetch(`${instances[i]!.url}${path}`)).json()) as { keys: { kid: string }[] }).keys.map((k) => k.kid).sort();
  /** Every instance accepts every token, both as a participant token / an OAuth access token. */
  const acceptedEverywhere = async (participant: string[], access: string[]) => {
    for (const instance of instances) {
      for (const token of participant) assert.equal((await validateParticipantToken(instance.ctx, token)).sub, tenant.projectId);
      for (const token of access) assert.equal((await instance.ctx.auth.authenticate(token))?.kind, 'oauth');
    }
  };

  test('before, during and after a rotation, tokens verify on every instance; then the old key retires', async () => {
    const first = instances[0]!.ctx.keys.current.kid;
    const before = { participant: await participantToken(0), access: await accessToken(instances.length - 1) };
    assert.equal(kidOf(before.participant), first);
    assert.equal(kidOf(before.access), first);
    await acceptedEverywhere([before.participant], [before.access]);

    const rotatedAt = Date.now();
    const next = await rotateSigningKey(instances[0]!.ctx.db, instances[0]!.ctx.secrets);
    // During: one instance has picked the key up (it refreshes); the others have not, yet they accept its tokens at once.
    await instances[0]!.ctx.keys.refresh();
    const during = await participantToken(0);
    assert.equal(kidOf(during), next);
    await acceptedEverywhere([before.participant, during], [before.access]);

    // Within the refresh interval every instance signs with the new key, the OAuth provider included.
    await until(async () => {
      for (let i = 0; i < instances.length; i++) {
        assert.equal(instances[i]!.ctx.keys.current.kid, next);
        assert.equal(kidOf(await accessToken(i)), next);
      }
    }, 5000);
    const converged = Date.now() - rotatedAt;
    assert.ok(converged < 3000, `all instances sign with the new key after ${converged} ms`);
    for (let i = 0; i < instances.length; i++) {
      assert.deepEqual(await jwksKids(i, '/.well-known/jwks.json'), [first, next].sort());
      assert.deepEqual(await jwksKids(i, '/oauth/jwks'), [first, next].sort());
    }
    const afterwards = { participant: await participantToken(instances.length - 1), access: await accessToken(0) };
    await acceptedEverywhere([before.participant, during, afterwards.participant], [before.access, afterwards.access]);

    // Not yet: the old key has been superseded for less than the retirement delay.
    const retireAfter = instances[0]!.ctx.config.keys.retireAfterMs;
    assert.deepEqual(await retireSupersededKeys(instances[0]!.ctx.db, retireAfter, new Date(Date.now() + retireAfter - 60_000)), []);
    // Later (injected clock), its tokens have expired: it leaves the JWKS and verifies no more.
    assert.deepEqual(await retireSupersededKeys(instances[0]!.ctx.db, retireAfter, new Date(Date.now() + retireAfter + 60_000)), [first]);
    await until(async () => {
      for (let i = 0; i < instances.length; i++) {
        assert.deepEqual(await jwksKids(i, '/.well-known/jwks.json'), [next]);
        assert.deepEqual(await jwksKids(i, '/oauth/jwks'), [next]);
      }
    }, 5000);
    for (const instance of instances) await assert.rejects(validateParticipantToken(instance.ctx, before.participant), /Unknown signing key/);
    await acceptedEverywhere([during, afterwards.participant], [afterwards.access]);
  });
});
