// Members by email and invitations, through the development mailbox: a known address is added at
// once; an unknown one gets a mail whose link creates the account and joins; invitations are
// listed, resent (the old link dies), revoked, expire, are used once, and their mail is rate-limited.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { issuePersonalAccessToken } from '../../src/modules/users/service.ts';
import { EMAIL_LOGIN_ENV, linkIn, mailCount, pageError, waitForMail } from '../support/oauth.ts';
import { call, createTenant, createUserWithToken, forEachEngine, startTestService, type Tenant, type TestService } from '../support/service.ts';

forEachEngine('invitations', (engine) => {
  let service: TestService;
  let tenant: Tenant;
  const address = () => `invitee-${randomUUID()}@example.test`;

  before(async () => {
    service = await startTestService(engine, { ...EMAIL_LOGIN_ENV, ATRIUM_SIGNIN_LIMIT_PER_ACCOUNT: '3' });
    tenant = await createTenant(service, 'invitations');
  });
  after(async () => service?.stop());

  const users = (json: unknown, token = tenant.userToken) => call(service, 'POST', `/accounts/projects/${tenant.projectId}/users`, { token, json });
  const list = () => call(service, 'GET', `/accounts/projects/${tenant.projectId}/invitations`, { token: tenant.userToken });
  const form = (fields: Record<string, string>) => call(service, 'POST', '/signin/invitation/form', {
    body: new URLSearchParams(fields).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  const tokenOf = (link: string) => new URL(link).searchParams.get('token')!;

  test('a known address is added at once, without mail, and can use the project', async () => {
    const known = await createUserWithToken(service, 'known');
    const before = await mailCount(service, known.email);
    const added = await users({ email: known.email, roles: ['developer'] });
    assert.equal(added.status, 200, JSON.stringify(added.body));
    assert.deepEqual(added.body, { ok: true, status: 'added', user_id: known.userId });
    assert.equal(await mailCount(service, known.email), before);
    const role = await call(service, 'GET', `/accounts/projects/${tenant.projectId}/role`, { token: known.token });
    assert.equal(role.status, 200);
    assert.equal(role.body.role, 'developer');
  });

  test('an unknown address is invited; the link signs up and joins, once', async () => {
    const email = address();
    const since = new Date();
    const invited = await users({ email, roles: ['member', 'room_creator'] });
    assert.equal(invited.status, 200, JSON.stringify(invited.body));
    assert.equal(invited.body.status, 'invited');
    assert.equal(invited.body.invitation.email, email);
    assert.equal(invited.body.invitation.status, 'pending');
    assert.equal(invited.body.invitation.mail_sent, true);
    const listed = await list();
    assert.ok(listed.body.invitations.some((i: { id: string }) => i.id === invited.body.invitation.id));

    const mail = await waitForMail(service, email, /^Join invitations project on Atrium$/, since);
    const link = linkIn(mail.text);
    assert.ok(link.startsWith(`${service.ctx.config.publicUrl}/signin/invitation?token=`), link);
    const pageResponse = await fetch(link);
    assert.equal(pageResponse.status, 200);
    assert.match(pageResponse.headers.get('content-security-policy') ?? '', /default-src 'none'/);
    const html = await pageResponse.text();
    assert.match(html, /invitations project/);
    assert.match(html, /name="password"/);
    // The sign-in pages' layout: their stylesheet, logo, heading and footer; no inline style.
    assert.match(html, /<link rel="stylesheet" href="\/signin\/assets\/style\.css">/);
    assert.match(html, /<img id="client-logo" src="\/signin\/assets\/logo\.svg"/);
    assert.match(html, /<h1 id="page-title">Join invitations project<\/h1>/);
    assert.match(html, /<label for="f-password">Choose a password \(at least 8 characters\)<\/label>/);
    assert.match(html, /<footer>Sign-in secured by Atrium<\/footer>/);
    assert.doesNotMatch(html, /<style|<script/);

    // The JSON door refuses an account without a password; the form with one creates it and joins.
    const noPassword = await call(service, 'POST', '/invitations/accept', { json: { token: tokenOf(link) } });
    assert.equal(noPassword.status, 400);
    const weak = await form({ token: tokenOf(link), password: 'short', first_name: 'Ina' });
    assert.equal(weak.status, 400);
    // The same page again, the reason announced, what was typed kept (the password excepted).
    assert.match(pageError(String(weak.body)) ?? '', /at least 8 characters/);
    assert.match(String(weak.body), /<h1 id="page-title">Join invitations project<\/h1>/);
    assert.match(String(weak.body), /id="f-first_name" name="first_name" type="text" value="Ina"/);
    assert.doesNotMatch(String(weak.body), /value="short"/);
    const joined = await form({ token: tokenOf(link), password: 'a long enough password', first_name: 'Ina', last_name: 'Vite' });
    assert.equal(joined.status, 200, String(joined.body));
    assert.match(String(joined.body), /is now a member/);

    const members = await call(service, 'GET', `/accounts/projects/${tenant.projectId}/users?count=100`, { token: tenant.userToken });
    const member = members.body.users.find((u: { email: string }) => u.email === email);
    assert.ok(member, 'the invitee is a member');
    assert.deepEqual(member.roles.sort(), ['member', 'room_creator']);
    assert.equal(member.first_name, 'Ina');
    const token = await issuePersonalAccessToken(service.ctx.db, member.user_id, 'test');
    const role = await call(service, 'GET', `/accounts/projects/${tenant.projectId}/role`, { token });
    assert.equal(role.status, 200);
    assert.ok(role.body.can_create_rooms);

    assert.match(String(joined.body), /<h1 id="page-title">You have joined<\/h1>/);
    assert.match(String(joined.body), new RegExp(`<a href="${service.ctx.config.publicUrl}/console">`));

    // Used up: the link, the page and the list all say so.
    assert.equal((await form({ token: tokenOf(link), password: 'a long enough password' })).status, 404);
    const gone = await fetch(link);
    assert.equal(gone.status, 404);
    const goneHtml = await gone.text();
    assert.match(goneHtml, /<h1 id="page-title">This invitation cannot be used<\/h1>/);
    assert.match(pageError(goneHtml) ?? '', /Ask the project's admin to send a new one\./);
    assert.ok(!(await list()).body.invitations.some((i: { email: string }) => i.email === email));
  });

  test('resend replaces the link; revoke kills it; non-admins cannot manage invitations', async () => {
    const email = address();
    const since = new Date();
    const invited = await users({ email });
    const id = invited.body.invitation.id as string;
    const first = linkIn((await waitForMail(service, email, /^Join /, since)).text);
    const resendAt = new Date();
    const resent = await call(service, 'POST', `/accounts/projects/${tenant.projectId}/invitations/${id}/resend`, { token: tenant.userToken, json: {} });
    assert.equal(resent.status, 200);
    assert.equal(resent.body.sent_count, 2);
    const second = linkIn((await waitForMail(service, email, /^Join /, resendAt)).text);
    assert.notEqual(first, second);
    assert.equal((await fetch(first)).status, 404, 'the replaced link no longer works');
    assert.equal((await fetch(second)).status, 200);

    const outsider = await createUserWithToken(service, 'outsider');
    assert.equal((await users({ user_id: outsider.userId, roles: ['developer'] })).status, 200);
    assert.equal((await call(service, 'GET', `/accounts/projects/${tenant.projectId}/invitations`, { token: outsider.token })).status, 403);
    assert.equal((await users({ email: address() }, outsider.token)).status, 403);

    const revoked = await call(service, 'DELETE', `/accounts/projects/${tenant.projectId}/invitations/${id}`, { token: tenant.userToken });
    assert.equal(revoked.status, 200);
    assert.equal((await fetch(second)).status, 404);
    assert.equal((await call(service, 'POST', '/invitations/accept', { json: { token: tokenOf(second), password: 'a long enough password' } })).status, 404);
    assert.equal((await call(service, 'DELETE', `/accounts/projects/${tenant.projectId}/invitations/${id}`, { token: tenant.userToken })).status, 404);
  });

  test('invitations expire', async () => {
    const email = address();
    const since = new Date();
    const invited = await users({ email });
    const link = linkIn((await waitForMail(service, email, /^Join /, since)).text);
    await service.ctx.db.execute(sql`update project_invitations set expires_at = now() - interval '1 second' where id = ${invited.body.invitation.id}`);
    assert.equal((await fetch(link)).status, 404);
    assert.equal((await call(service, 'POST', '/invitations/accept', { json: { token: tokenOf(link), password: 'a long enough password' } })).status, 404);
    const listed = (await list()).body.invitations.find((i: { id: string }) => i.id === invited.body.invitation.id);
    assert.equal(listed.status, 'expired');
  });

  test('invitation mail is rate-limited per address like the sign-in mail', async () => {
    const email = address();
    const invited = await users({ email });
    const id = invited.body.invitation.id as string;
    assert.equal((await users({ email })).status, 200);
    assert.equal((await call(service, 'POST', `/accounts/projects/${tenant.projectId}/invitations/${id}/resend`, { token: tenant.userToken })).status, 200);
    const limited = await call(service, 'POST', `/accounts/projects/${tenant.projectId}/invitations/${id}/resend`, { token: tenant.userToken });
    assert.equal(limited.status, 429);
    assert.equal(limited.body.error.code, 'rate_limited');
    assert.ok(Number(limited.headers.get('retry-after')) > 0);
    assert.equal(await mailCount(service, email), 3);
  });

  test('bad bodies: both or neither of user_id and email, or not an address', async () => {
    assert.equal((await users({})).status, 400);
    assert.equal((await users({ email: 'nobody' })).status, 400);
    assert.equal((await users({ email: address(), user_id: tenant.userId })).status, 400);
  });
});
