// The sign-in pages' security events in the audit log, through the real pages: a wrong password, a
// sign-in with its consent, a requested code. Each names the method, the account or the address
// given, the OAuth client, and the client's address through a trusted proxy; none holds a password.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'drizzle-orm';
import type * as oidc from 'openid-client';
import { rowsOf } from '../../src/platform/db/rows.ts';
import { authorizationRequest, EMAIL_LOGIN_ENV, FormBrowser, signInAndConsent, startOAuthService, type TestClient } from '../support/oauth.ts';
import { forEachEngine, type Tenant, type TestService } from '../support/service.ts';

interface Row { actor_type: string; actor_id: string | null; actor_name: string | null; credential_kind: string | null; oauth_client_id: string | null; action: string; outcome: string; client_address: string | null; user_agent: string | null; project_id: string | null }

const REMOTE = '203.0.113.9';

forEachEngine('audit log of the sign-in pages', (engine) => {
  let service: TestService;
  let tenant: Tenant;
  let client: TestClient;
  let config: oidc.Configuration;

  before(async () => {
    // Behind a proxy on loopback, which names the remote client in X-Forwarded-For.
    ({ service, tenant, client, config } = await startOAuthService(engine, { env: { ...EMAIL_LOGIN_ENV, ATRIUM_TRUST_PROXY: '127.0.0.1' }, tenant: 'audit-signin' }));
  });
  after(() => service?.stop());

  const entriesOf = async (email: string): Promise<Row[]> => {
    await service.ctx.audit.flush();
    return [...rowsOf<Row>(await service.ctx.db.execute(sql`select * from audit_log where actor_name = ${email} order by seq`))];
  };
  const browser = () => new FormBrowser(service.url, { 'x-forwarded-for': REMOTE, 'user-agent': 'audit-browser/1' });

  test('a wrong password, then a sign-in and its consent', async () => {
    const request = await authorizationRequest(config, client.redirectUri, 'openid profile');
    const b = browser();
    const login = await b.go('GET', request.url);
    const wrong = await b.submit(login, '/password', { email: tenant.email, password: 'not the password at all' });
    assert.equal(wrong.status, 401);
    const callback = await signInAndConsent(b, request, client.redirectUri, tenant.email, tenant.password);
    assert.ok(callback.searchParams.get('code'));
    const entries = await entriesOf(tenant.email);
    assert.deepEqual(entries.map((e) => [e.action, e.outcome, e.actor_type, e.actor_id]), [
      ['sign_in.password', 'failed', 'anonymous', null],
      ['sign_in.password', 'succeeded', 'user', tenant.userId],
      ['consent.grant', 'succeeded', 'user', tenant.userId],
    ]);
    for (const entry of entries) {
      assert.equal(entry.client_address, REMOTE);
      assert.equal(entry.user_agent, 'audit-browser/1');
      assert.equal(entry.oauth_client_id, client.clientId);
      assert.equal(entry.credential_kind, 'session');
      assert.equal(entry.project_id, null);
    }
    const all = JSON.stringify(rowsOf(await service.ctx.db.execute(sql`select * from audit_log`)));
    assert.ok(!all.includes('not the password at all') && !all.includes(tenant.password), 'no password in the log');
  });

  test('asking for a code is recorded; a wrong code is a failed sign-in by code', async () => {
    const request = await authorizationRequest(config, client.redirectUri, 'openid');
    const b = browser();
    const login = await b.go('GET', request.url);
    const asked = await b.go('GET', new URL(login.html.match(/href="([^"]*\/code)"/)![1]!.replaceAll('&amp;', '&'), login.url));
    const entry = await b.submit(asked, '/code', { email: tenant.email });
    assert.equal(entry.status, 200);
    const wrong = await b.submit(entry, '/code/verify', { code: '000000' });
    assert.equal(wrong.status, 401);
    const entries = (await entriesOf(tenant.email)).slice(-2);
    assert.deepEqual(entries.map((e) => [e.action, e.outcome]), [['sign_in.code_requested', 'succeeded'], ['sign_in.code', 'failed']]);
  });
});
