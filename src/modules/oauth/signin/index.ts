// The sign-in pages and which of them exist: the flow's page, consent and the invitation page
// always; the email forms when email sign-in is on; the upstream round trip when providers are
// configured. Each form is a file of its own, built from the shared steps (steps.ts) as a pipeline
// (pipeline.ts).
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import type { Api } from '../../../module.ts';
import { assetRoutes } from './assets.ts';
import { codeRoutes } from './code.ts';
import { confirmRoutes } from './confirm.ts';
import { consentRoutes } from './consent.ts';
import { forgotRoutes } from './forgot.ts';
import { invitationRoutes } from './invitation.ts';
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
    invitationRoutes(route, kit.ctx);
    if (kit.ctx.config.signin.emailLogin) {
      passwordRoutes(route, kit);
      codeRoutes(route, kit);
      signupRoutes(route, kit);
      confirmRoutes(route, kit);
      forgotRoutes(route, kit);
      resetRoutes(route, kit);
    }
    if (kit.upstream.list().length > 0) upstreamRoutes(route, kit);
  });
}
