// The sign-in pages and which of them exist: the flow's page, consent, second factors, passkeys and
// the invitation page always; the password form when password sign-in is on; the forms that send
// mail (codes, sign-up, confirmation, reset) when email sign-in is on; the upstream round trip when
// providers are configured. Each form is a file of its own, built from the shared steps (steps.ts) as a pipeline
// (pipeline.ts).
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import type { Api } from '../../../module.ts';
import { assetRoutes } from './assets.ts';
import { codeRoutes } from './code.ts';
import { confirmRoutes } from './confirm.ts';
import { factorRoutes } from './factor.ts';
import { consentRoutes } from './consent.ts';
import { forgotRoutes } from './forgot.ts';
import { invitationRoutes } from './invitation.ts';
import { passkeyRoutes } from './passkey.ts';
import { passwordRoutes } from './password.ts';
import type { SigninKit } from './pipeline.ts';
import { promptRoutes } from './prompt.ts';
import { resetRoutes } from './reset.ts';
import { signupRoutes } from './signup.ts';
import { upstreamRoutes } from './upstream.ts';

export type { SigninKit } from './pipeline.ts';

const FORM_BODY_LIMIT = 64 * 1024;

export async function signinRoutes(app: Api, kit: SigninKit): Promise<void> {
  await app.register(async (scope) => {
    await scope.register(cookie);
    await scope.register(formbody, { bodyLimit: FORM_BODY_LIMIT });
    const route = scope as unknown as Api;
    assetRoutes(route);
    promptRoutes(route, kit);
    consentRoutes(route, kit);
    factorRoutes(route, kit);
    passkeyRoutes(route, kit);
    invitationRoutes(route, kit.ctx);
    // Password sign-in needs no mail; everything that sends mail comes with email sign-in.
    if (kit.ctx.config.signin.passwordLogin) passwordRoutes(route, kit);
    if (kit.ctx.config.signin.emailLogin) {
      codeRoutes(route, kit);
      signupRoutes(route, kit);
      confirmRoutes(route, kit);
      forgotRoutes(route, kit);
      resetRoutes(route, kit);
    }
    if (kit.upstream.list().length > 0) upstreamRoutes(route, kit);
  });
}
