// Second factors in the deployment's audit log, on both engines: every change of a user's factors
// through the account routes (authenticator app, passkeys from a software authenticator, recovery
// codes) leaves one entry without a project, by the user, from their request, written with the
// change; what changes nothing that counts leaves none. The change's transaction holds what it must
// and nothing else: a change whose entry cannot be written is not made and mails nobody, a mail that
// cannot be written undoes no change, and wrong codes count even though their refusal rolls back.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { createUser, issuePersonalAccessToken } from '../../src/modules/users/service.ts';
import { rowsOf } from '../../src/platform/db/rows.ts';
import { freshUserToken, totpCode } from '../support/factors.ts';
import { whileInsertsFail } from '../support/failing-inserts.ts';
import { EMAIL_LOGIN_ENV, mailCount, startOAuthService, uniqueEmail, waitForMail } from '../support/oauth.ts';
import { registrationAnswer } from '../support/passkey.ts';
import { call, forEachEngine, type TestService } from '../support/service.ts';

const STEP_MS = 30_000;
const AGENT = 'audit-factors/1';

interface Entry {
  project_id: string | null;
  actor_type: string;
  actor_id: string | null;
  actor_name: string | null;
  credential_kind: string | null;
  credential_id: string | null;
  action: string;
  target_type: string | null;
  target_id: string | null;
  outcome: string;
  request_id: string | null;
  client_address: string | null;
  user_agent: string | null;
}

forEachEngine('audit of second factors', (engine) => {
  let service: TestService;

  before(async () => {
    ({ service } = await startOAuthService(engine, { env: { ...EMAIL_LOGIN_ENV, ATRIUM_AUTH_CACHE_SECONDS: '0' }, tenant: 'audit-factors' }));
  });
  after(() => service?.stop());

  async function signedIn(label: string) {
    const email = uniqueEmail(label);
    const password = 'a long enough password';
    const user = await createUser(service.ctx.db, { email, password, emailVerified: true });
    return { email, userId: user.id, token: await freshUserToken(service, email, password) };
  }

  const entriesOf = async (userId: string) =>
    [...rowsOf<Entry>(await service.ctx.db.execute(sql`select * from audit_log where target_id = ${userId} and action like 'second_factor.%' order by seq`))];

  const send = (method: string, path: string, token: string, json?: unknown) => call(service, method, path, { token, ...(json === undefined ? {} : { json }), headers: { 'user-agent': AGENT } });

  test('each change of a user\'s second factors leaves one deployment entry by the user, from their request; the rest none', async () => {
    const user = await signedIn('changes');
    const stale = await issuePersonalAccessToken(service.ctx.db, user.userId, 'script');
    assert.equal((await send('POST', '/accounts/factors/recovery-codes', stale, {})).status, 403, 'a stale sign-in is refused');
    const started = await send('POST', '/accounts/factors/totp', user.token, {});
    assert.equal(started.status, 200);
    assert.equal((await send('POST', '/accounts/factors/totp/confirm', user.token, { code: totpCode(started.body.secret, Date.now() + 10 * STEP_MS) })).status, 400);
    assert.deepEqual(await entriesOf(user.userId), [], 'starting an enrolment, a refusal and a wrong code record nothing');

    const steps: [string, Awaited<ReturnType<typeof send>>][] = [];
    const step = async (action: string, method: string, path: string, json?: unknown) => {
      const answer = await send(method, path, user.token, json);
      assert.equal(answer.status, 200, `${method} ${path}: ${JSON.stringify(answer.body)}`);
      steps.push([action, answer]);
      return answer;
    };
    await step('second_factor.totp_enrolled', 'POST', '/accounts/factors/totp/confirm', { code: totpCode(started.body.secret) });
    const options = await send('POST', '/accounts/factors/passkeys/options', user.token, {});
    assert.equal(options.status, 200);
    const added = await step('second_factor.passkey_enrolled', 'POST', '/accounts/factors/passkeys', { name: 'Test key', response: registrationAnswer(options.body, new URL(service.url).origin) });
    const passkey: string = added.body.passkey.id;
    await step('second_factor.passkey_renamed', 'PATCH', `/accounts/factors/passkeys/${passkey}`, { name: 'Renamed key' });
    await step('second_factor.recovery_codes_replaced', 'POST', '/accounts/factors/recovery-codes', {});
    await step('second_factor.passkey_removed', 'DELETE', `/accounts/factors/passkeys/${passkey}`);
    await step('second_factor.totp_removed', 'DELETE', '/accounts/factors/totp');
    assert.equal((await send('DELETE', '/accounts/factors/totp', user.token)).status, 404, 'nothing left to remove');

    const entries = await entriesOf(user.userId);
    assert.deepEqual(entries.map((e) => e.action), steps.map(([action]) => action), 'one entry per change, in order');
    const principal = await service.ctx.auth.authenticate(user.token);
    entries.forEach((entry, i) => {
      const answer = steps[i]![1];
      assert.deepEqual(
        [entry.project_id, entry.actor_type, entry.actor_id, entry.actor_name, entry.credential_kind, entry.credential_id, entry.target_type, entry.target_id, entry.outcome],
        [null, 'user', user.userId, principal?.name ?? null, 'user', principal!.credentialId, 'account', user.userId, 'succeeded'],
      );
      assert.deepEqual([entry.request_id, entry.client_address, entry.user_agent], [answer.headers.get('x-request-id'), '127.0.0.1', AGENT]);
    });
  });

  test('a change whose entry cannot be written is not made, and its owner is not mailed', async () => {
    const user = await signedIn('unwritable');
    const { db } = service.ctx;
    await whileInsertsFail(db, 'audit_log', `new.actor_id = '${user.userId}'`, 'audit entry refused', async () => {
      const started = await send('POST', '/accounts/factors/totp', user.token, {});
      assert.equal((await send('POST', '/accounts/factors/totp/confirm', user.token, { code: totpCode(started.body.secret) })).status, 500);
    });
    assert.equal((await send('GET', '/accounts/factors', user.token)).body.second_factor, false, 'no change without its entry');
    // A mail would be on its way by now: the next change's mail arrives, the refused one's never.
    const started = await send('POST', '/accounts/factors/totp', user.token, {});
    assert.equal((await send('POST', '/accounts/factors/totp/confirm', user.token, { code: totpCode(started.body.secret) })).status, 200);
    await waitForMail(service, user.email, /second factors/);
    assert.equal(await mailCount(service, user.email), 1);
  });

  test('a mail that cannot be written undoes no change: the factor and its entry stand', async () => {
    const user = await signedIn('unmailable');
    const { db } = service.ctx;
    await whileInsertsFail(db, 'dev_mail_outbox', `new.recipient = '${user.email}'`, 'mail refused', async () => {
      const started = await send('POST', '/accounts/factors/totp', user.token, {});
      const confirmed = await send('POST', '/accounts/factors/totp/confirm', user.token, { code: totpCode(started.body.secret) });
      assert.equal(confirmed.status, 200, JSON.stringify(confirmed.body));
    });
    assert.equal((await send('GET', '/accounts/factors', user.token)).body.second_factor, true);
    assert.deepEqual((await entriesOf(user.userId)).map((e) => e.action), ['second_factor.totp_enrolled']);
  });

  test('wrong codes while confirming an app count in the database though their refusal rolls back: the sixth try is locked', { timeout: 30_000 }, async () => {
    const user = await signedIn('wrong-codes');
    const started = await send('POST', '/accounts/factors/totp', user.token, {});
    const wrong = totpCode(started.body.secret, Date.now() + 10 * STEP_MS);
    for (let i = 0; i < 5; i++) assert.equal((await send('POST', '/accounts/factors/totp/confirm', user.token, { code: wrong })).status, 400);
    const locked = await send('POST', '/accounts/factors/totp/confirm', user.token, { code: totpCode(started.body.secret) });
    assert.equal(locked.status, 429, 'even the right code, until the window ends');
    assert.deepEqual(await entriesOf(user.userId), []);
  });
});
