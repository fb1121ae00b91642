// A deployment's first minute as an operator lives it: the setup link the server prints, the setup
// the console's page submits, then signing in as the new admin through the sign-in pages with the
// console's own OAuth client, ending with an access token that acts as that admin. And what a
// deployment's defaults look like from outside: the development mailbox, private webhook targets,
// the sign-in methods on the sign-in page.
import assert from 'node:assert/strict';
import * as oidc from 'openid-client';
import { setupLink } from '../../src/modules/setup/service.ts';
import { devMailboxLink } from '../../src/modules/oauth/service.ts';
import { ATRIUM_CONSOLE_CLIENT_ID } from '../../src/modules/oauth/first-party.ts';
import type { RunningService } from '../../src/main.ts';
import { authorizationRequest, discover, FormBrowser, signInAndConsent } from './oauth.ts';
import { call } from './service.ts';

export interface Admin {
  email: string;
  password: string;
  projectId: string;
  /** The console's access token: acts as the admin. */
  accessToken: string;
}

/**
 * From an empty database to a signed-in admin, through `base` (the public URL: the server, or a
 * proxy in front of it), as a browser there would go.
 */
export async function firstRunToAdmin(service: RunningService, base: string, label: string): Promise<Admin> {
  const link = await setupLink(service.ctx);
  assert.ok(link, 'an empty database prints the setup link');
  const token = new URL(link!).searchParams.get('token')!;
  assert.equal((await call(base, 'POST', '/setup/check', { json: { token } })).status, 200);
  const email = `${label}-admin@example.test`;
  const password = 'a long admin password';
  const created = await call(base, 'POST', '/setup', { json: { token, email, password, project_name: `${label} project` } });
  assert.equal(created.status, 201, JSON.stringify(created.body));

  const redirectUri = `${service.ctx.config.publicUrl}/console/callback`;
  const config = await discover({ url: base }, { clientId: ATRIUM_CONSOLE_CLIENT_ID, clientSecret: '' });
  const request = await authorizationRequest(config, redirectUri, 'openid profile email atrium:user');
  const callback = await signInAndConsent(new FormBrowser(base), request, redirectUri, email, password);
  const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: request.verifier, expectedState: request.state, expectedNonce: request.nonce });
  const role = await call(base, 'GET', `/accounts/projects/${created.body.project_id}/role`, { token: tokens.access_token });
  assert.equal(role.body.role, 'admin', 'the signed-in admin acts as the project\'s admin');
  return { email, password, projectId: created.body.project_id, accessToken: tokens.access_token };
}

/** The sign-in page a browser meets at `base`: which ways in it offers. */
export async function signinMethods(base: string): Promise<{ password: boolean; signUp: boolean; resets: boolean }> {
  const config = await discover({ url: base }, { clientId: ATRIUM_CONSOLE_CLIENT_ID, clientSecret: '' });
  const request = await authorizationRequest(config, `${base}/console/callback`, 'openid');
  const page = await new FormBrowser(base).go('GET', request.url);
  assert.equal(page.status, 200);
  return { password: page.html.includes('id="password-form"'), signUp: page.html.includes('/signup"'), resets: page.html.includes('/forgot"') };
}

/** The status of the development mailbox at `base`, with the key the server prints and without. */
export async function mailboxStatus(service: RunningService, base: string): Promise<{ withKey: number; withoutKey: number }> {
  const { search } = new URL(devMailboxLink(service.ctx.config));
  return {
    withKey: (await call(base, 'GET', `/dev/mail${search}`)).status,
    withoutKey: (await call(base, 'GET', '/dev/mail')).status,
  };
}

/** Registers a webhook to `url` as the admin: the answer's status and error code. */
export async function registerWebhook(base: string, admin: Admin, url: string): Promise<{ status: number; code: string | undefined }> {
  const answer = await call(base, 'POST', `/accounts/projects/${admin.projectId}/webhooks`, { token: admin.accessToken, json: { name: 'receiver', url, events: ['room.started'] } });
  return { status: answer.status, code: answer.body?.error?.code };
}
