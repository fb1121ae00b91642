// User profiles: `GET|PUT /accounts/profiles/{user_id}`, with `me` for the caller; and the caller's
// own second factors under `/accounts/factors`.
import { Type } from 'typebox';
import type { RegistrationResponseJSON } from '@simplewebauthn/server';
import type { AppContext } from '../../context.ts';
import type { Api } from '../../module.ts';
import { EmptyBody, Ok, OK } from '../../platform/http/schemas.ts';
import { callerOf } from '../../platform/http/auth.ts';
import { createSecondFactors } from './factors.ts';
import {
  Factors, NewRecoveryCodes, Passkey, PasskeyOptions, PasskeyParams, PasskeyRegistered, PasskeyRegistration, PasskeyRename,
  Profile, ProfileUpdate, RecoveryCodes, TotpConfirm, TotpEnrolment, profileOf,
} from './schema.ts';
import { readableProfile, updateOwnProfile } from './service.ts';

const Params = Type.Object({ user_id: Type.String({ maxLength: 64, description: 'A user id, or `me`' }) });

// Only the user's own sign-in (a personal access token, or the console's and CLI's tokens) manages
// their factors; changes also need a recent sign-in (docs/sign-in.md).
const own = { auth: { permission: 'authenticated' as const, credentials: ['user' as const] } };
/** A change of the caller's factors: a deployment event in the audit log, written with it. */
const changes = (action: string, means: string) => ({ ...own, audit: { action: `second_factor.${action}`, means } });
const tags = ['Second factors'];
const FRESH = 'Needs a sign-in of the last 10 minutes (`reauthentication_required` otherwise); mails the account\'s owner.';

export function userRoutes(app: Api, ctx: AppContext): void {
  app.get('/accounts/profiles/:user_id', {
    config: { auth: { permission: 'authenticated', credentials: ['api_key', 'user', 'oauth'], oauthScope: 'profile:read' } },
    schema: { tags: ['Profiles'], summary: 'Fetch a user profile (`me` for the caller)', params: Params, response: { 200: Profile } },
  }, async (request) => profileOf(await readableProfile(ctx, callerOf(request), request.params.user_id)));

  app.put('/accounts/profiles/:user_id', {
    config: { auth: { permission: 'authenticated', credentials: ['user'] } },
    schema: { tags: ['Profiles'], summary: 'Update your own profile', params: Params, body: ProfileUpdate, response: { 200: Ok } },
  }, async (request) => {
    await updateOwnProfile(ctx, callerOf(request), request.params.user_id, request.body);
    return OK;
  });

  const factors = createSecondFactors(ctx);

  app.get('/accounts/factors', {
    config: own,
    schema: { tags, summary: 'Your second factors: authenticator app, passkeys, recovery codes left', response: { 200: Factors } },
  }, async (request) => factors.view(request.principal!.userId!));

  app.post('/accounts/factors/totp', {
    config: own,
    schema: {
      tags, summary: 'Start adding an authenticator app: a new secret to scan or type',
      description: `The app counts once confirmed with a code (\`/accounts/factors/totp/confirm\`); until then a current one stays. ${FRESH}`,
      body: EmptyBody, response: { 200: TotpEnrolment },
    },
  }, async (request) => factors.startTotp(request.principal!));

  app.post('/accounts/factors/totp/confirm', {
    config: changes('totp_enrolled', 'Added an authenticator app, or replaced the one they had, confirming it with its code (a first second factor brings recovery codes)'),
    schema: {
      tags, summary: 'Confirm the authenticator app with its current code',
      description: `Wrong codes count against the account (5 per 15 minutes). Returns recovery codes, once, when this is the account's first second factor. ${FRESH}`,
      body: TotpConfirm, response: { 200: RecoveryCodes },
    },
  }, async (request) => factors.confirmTotp(request.principal!, request.body.code));

  app.delete('/accounts/factors/totp', {
    config: changes('totp_removed', 'Removed their authenticator app (with their last second factor, their recovery codes went too)'),
    schema: { tags, summary: 'Remove the authenticator app', description: FRESH, response: { 200: Ok } },
  }, async (request) => {
    await factors.removeTotp(request.principal!);
    return OK;
  });

  app.post('/accounts/factors/passkeys/options', {
    config: own,
    schema: { tags, summary: 'Options to create a passkey in the browser', description: FRESH.replace('; mails the account\'s owner', ''), body: EmptyBody, response: { 200: PasskeyOptions } },
  }, async (request) => factors.passkeyRegistrationOptions(request.principal!) as unknown as Record<string, unknown>);

  app.post('/accounts/factors/passkeys', {
    config: changes('passkey_enrolled', 'Added a passkey (a first second factor brings recovery codes)'),
    schema: {
      tags, summary: 'Add a passkey: the browser\'s answer to the options',
      description: `Its origin must be \`ATRIUM_PUBLIC_URL\`'s. Returns recovery codes, once, when this is the account's first second factor. ${FRESH}`,
      body: PasskeyRegistration, response: { 200: PasskeyRegistered },
    },
  }, async (request) => factors.registerPasskey(request.principal!, request.body.name, request.body.response as unknown as RegistrationResponseJSON));

  app.patch('/accounts/factors/passkeys/:passkey_id', {
    config: changes('passkey_renamed', 'Renamed one of their passkeys'),
    schema: { tags, summary: 'Rename a passkey', params: PasskeyParams, body: PasskeyRename, response: { 200: Passkey } },
  }, async (request) => factors.renamePasskey(request.principal!, request.params.passkey_id, request.body.name));

  app.delete('/accounts/factors/passkeys/:passkey_id', {
    config: changes('passkey_removed', 'Removed a passkey (with their last second factor, their recovery codes went too)'),
    schema: { tags, summary: 'Remove a passkey', description: FRESH, params: PasskeyParams, response: { 200: Ok } },
  }, async (request) => {
    await factors.removePasskey(request.principal!, request.params.passkey_id);
    return OK;
  });

  app.post('/accounts/factors/recovery-codes', {
    config: changes('recovery_codes_replaced', 'Made new recovery codes; the old ones no longer work'),
    schema: { tags, summary: 'Replace your recovery codes with new ones (shown once)', description: FRESH, body: EmptyBody, response: { 200: NewRecoveryCodes } },
  }, async (request) => ({ recovery_codes: await factors.regenerateRecoveryCodes(request.principal!) }));
}
