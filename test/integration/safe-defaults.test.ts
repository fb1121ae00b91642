// The quick start cannot be taken over from the network. The development mailbox holds every
// password-reset link, and anyone may ask for a reset of the admin's address: so the server refuses
// to start with the mailbox on an address that serves the network, and shows the mailbox only to
// clients on this machine whose requests no proxy forwarded, and only with the key of the link the
// server prints (a proxy on this machine that adds no forwarding header looks local).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ConfigError } from '../../src/config.ts';
import { devMailboxLink } from '../../src/modules/oauth/service.ts';
import { ATRIUM_CLI_CLIENT_ID } from '../../src/modules/oauth/first-party.ts';
import { listOutbox } from '../../src/platform/mail/mailer.ts';
import { call, createTenant, forEachEngine, startTestService, type Tenant, type TestService } from '../support/service.ts';
import { EMAIL_LOGIN_ENV, FormBrowser, authorizationRequest, discover, linkIn, signInAndConsent, waitForMail } from '../support/oauth.ts';

// Forwarded by a trusted proxy for a remote client; then the same through a proxy that appends to
// whatever the client claimed, or that uses the other forwarding headers.
const REMOTE: Record<string, string> = { 'x-forwarded-for': '203.0.113.7' };
const SPOOFED: Record<string, string>[] = [{ 'x-forwarded-for': '127.0.0.1' }, { 'x-forwarded-for': '127.0.0.1, 203.0.113.7' }, { forwarded: 'for=127.0.0.1' }, { 'x-real-ip': '127.0.0.1' }];
const CALLBACK = 'http://127.0.0.1:9/callback';

forEachEngine('safe defaults: the development mailbox', (engine) => {
  let service: TestService;
  let admin: Tenant;

  before(async () => {
    service = await startTestService(engine, { ...EMAIL_LOGIN_ENV, ATRIUM_TRUST_PROXY: 'true' });
    admin = await createTenant(service, 'admin');
  });
  after(() => service?.stop());

  test('the server refuses to start with the mailbox on an address that serves the network', async () => {
    for (const host of ['0.0.0.0', '::']) {
      await assert.rejects(startTestService(engine, { ...EMAIL_LOGIN_ENV, HOST: host }), (error) => {
        assert.ok(error instanceof ConfigError, String(error));
        assert.match(error.message, /serves the network, but the development mailbox \(\/dev\/mail\) is on/);
        assert.match(error.message, /ATRIUM_SMTP_URL/);
        return true;
      });
    }
  });

  test('a remote client can ask to reset the admin\'s password but cannot read the link; this machine can', async () => {
    // Anyone can start a sign-in, with the built-in CLI client, and ask for a reset of any address.
    const remote = new FormBrowser(service.url, REMOTE);
    const cli = await discover(service, { clientId: ATRIUM_CLI_CLIENT_ID, clientSecret: '' });
    const login = await remote.go('GET', (await authorizationRequest(cli, CALLBACK, 'openid')).url);
    assert.equal(login.status, 200);
    const uid = /\/interaction\/([^/"]+)\//.exec(login.html)![1]!;
    const since = new Date();
    const sent = await remote.submit(await remote.go('GET', `/interaction/${uid}/forgot`), '/forgot', { email: admin.email });
    assert.match(sent.html, /If an account exists/);
    const mail = await waitForMail(service, admin.email, /Reset your password/, since);
    const resetLink = linkIn(mail.text);
    const id = (await listOutbox(service.ctx.db)).find((m) => m.recipient === admin.email && m.textBody === mail.text)!.id;
    const key = new URL(devMailboxLink(service.ctx.config)).search;

    // Refused exactly like a route that does not exist.
    const unknownPath = '/dev/no-such-page';
    const unknown = await call(service, 'GET', unknownPath, { headers: REMOTE });
    assert.equal(unknown.status, 404);
    for (const headers of [REMOTE, ...SPOOFED]) {
      for (const path of ['/dev/mail', `/dev/mail/${id}`, `/dev/mail${key}`, `/dev/mail/${id}${key}`]) {
        const refused = await call(service, 'GET', path, { headers });
        const what = `${path} with ${JSON.stringify(headers)}`;
        assert.equal(refused.status, 404, what);
        assert.equal(refused.headers.get('content-type'), unknown.headers.get('content-type'), what);
        assert.deepEqual(refused.body, { error: { ...unknown.body.error, message: unknown.body.error.message.replace(unknownPath, path.split('?')[0]!), request_id: refused.body.error.request_id } }, what);
      }
    }
    // From this machine too, without the key, or with a wrong one.
    for (const path of ['/dev/mail', `/dev/mail/${id}`, '/dev/mail?key=wrong', `/dev/mail?key=${'A'.repeat(43)}`]) {
      assert.equal((await call(service, 'GET', path)).status, 404, path);
    }
    assert.equal((await remote.go('GET', '/dev/mail')).status, 404, 'the browser that asked for the reset sees nothing either');

    // The admin's password is unchanged: it still signs in.
    const check = new FormBrowser(service.url, REMOTE);
    const again = await authorizationRequest(cli, CALLBACK, 'openid');
    const signedIn = await signInAndConsent(check, again, CALLBACK, admin.email, admin.password);
    assert.ok(signedIn.searchParams.get('code'), 'the old password works');

    // On this machine the development flow still works: the mailbox lists the mail, and its link resets the password.
    const local = new FormBrowser(service.url);
    const list = await local.go('GET', `/dev/mail${key}`);
    assert.equal(list.status, 200);
    assert.ok(list.html.includes(`/dev/mail/${id}${key}`), 'the mail is listed');
    const shown = await local.go('GET', `/dev/mail/${id}${key}`);
    assert.equal(shown.status, 200);
    assert.ok(shown.html.includes(resetLink.replaceAll('&', '&amp;')), 'the reset link is shown');
    const reset = await local.go('GET', resetLink);
    const done = await local.submit(reset, '/reset', { password: 'a new admin password' });
    assert.match(done.html, /Your password was changed/);
  });
});
