// Revoked OAuth grants in the audit log, on both engines, through the real token and revocation
// endpoints: a client revoking its refresh token, and an authorization code redeemed twice (one
// after the other, and at once), each leave one entry in the project of the client, by the client,
// on the grant, and never a token's value.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'drizzle-orm';
import * as oidc from 'openid-client';
import { rowsOf } from '../../src/platform/db/rows.ts';
import { authorizationRequest, EMAIL_LOGIN_ENV, FormBrowser, jwtClaims, signInAndConsent, startOAuthService, type TestClient } from '../support/oauth.ts';
import { forEachEngine, type Tenant, type TestService } from '../support/service.ts';

const SCOPE = 'openid offline_access profile:read';

interface Entry {
  project_id: string | null;
  actor_type: string;
  actor_id: string | null;
  credential_kind: string | null;
  oauth_client_id: string | null;
  action: string;
  target_type: string | null;
  outcome: string;
  request_id: string | null;
  client_address: string | null;
}

forEachEngine('audit of revoked grants', (engine) => {
  let service: TestService;
  let tenant: Tenant;
  let client: TestClient;
  let config: oidc.Configuration;

  before(async () => {
    ({ service, tenant, client, config } = await startOAuthService(engine, { env: { ...EMAIL_LOGIN_ENV, ATRIUM_AUTH_CACHE_SECONDS: '0' }, tenant: 'revoke' }));
  });
  after(() => service?.stop());

  async function freshCode() {
    const request = await authorizationRequest(config, client.redirectUri, SCOPE);
    const callback = await signInAndConsent(new FormBrowser(service.url), request, client.redirectUri, tenant.email, tenant.password);
    return { verifier: request.verifier, code: callback.searchParams.get('code')! };
  }

  const redeem = (code: string, verifier: string) => fetch(`${service.url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}` },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: client.redirectUri }),
  });

  const entriesOn = async (grantId: string) =>
    [...rowsOf<Entry>(await service.ctx.db.execute(sql`select * from audit_log where target_id = ${grantId} order by seq`))];

  function assertByClient(entry: Entry | undefined, action: string) {
    assert.deepEqual(
      [entry?.project_id, entry?.actor_type, entry?.actor_id, entry?.credential_kind, entry?.oauth_client_id, entry?.action, entry?.target_type, entry?.outcome, entry?.client_address],
      [tenant.projectId, 'oauth_client', client.clientId, 'oauth_client', client.clientId, action, 'oauth_grant', 'succeeded', '127.0.0.1'],
    );
    assert.ok(entry?.request_id);
  }

  test('a client revoking its refresh token revokes the grant: one entry in its project, by the client, on the grant', async () => {
    const { code, verifier } = await freshCode();
    const tokens = (await (await redeem(code, verifier)).json()) as { access_token: string; refresh_token: string };
    const grantId = jwtClaims(tokens.access_token).grant_id as string;
    assert.deepEqual(await entriesOn(grantId), []);
    await oidc.tokenRevocation(config, tokens.refresh_token);
    const entries = await entriesOn(grantId);
    assert.equal(entries.length, 1);
    assertByClient(entries[0], 'oauth_grant.revoke');
    const all = JSON.stringify(rowsOf(await service.ctx.db.execute(sql`select * from audit_log`)));
    for (const secret of [tokens.refresh_token, tokens.access_token, code, client.clientSecret!]) assert.ok(!all.includes(secret), 'no entry holds a token, code or secret');
    await assert.rejects(oidc.refreshTokenGrant(config, tokens.refresh_token));
  });

  test('an authorization code redeemed twice, one after the other or at once, revokes the grant once, recorded as a replay', async () => {
    const { code, verifier } = await freshCode();
    const first = (await (await redeem(code, verifier)).json()) as { access_token: string };
    assert.equal((await redeem(code, verifier)).status, 400);
    const entries = await entriesOn(jwtClaims(first.access_token).grant_id as string);
    assert.equal(entries.length, 1);
    assertByClient(entries[0], 'oauth_grant.revoke_replayed');

    const raced = await freshCode();
    const answers = await Promise.all(Array.from({ length: 4 }, () => redeem(raced.code, raced.verifier)));
    const won = answers.filter((r) => r.status === 200);
    assert.equal(won.length, 1);
    const grantId = jwtClaims(((await won[0]!.json()) as { access_token: string }).access_token).grant_id as string;
    const racedEntries = await entriesOn(grantId);
    assert.equal(racedEntries.length, 1, JSON.stringify(racedEntries));
    assertByClient(racedEntries[0], 'oauth_grant.revoke_replayed');
  });
});
