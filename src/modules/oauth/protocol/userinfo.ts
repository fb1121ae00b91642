// OpenID Connect userinfo. Atrium's access tokens are JWTs the library cannot look up, so Atrium
// serves this endpoint itself: the claims the token's scopes release (claims.ts).
import { Type } from 'typebox';
import type { AppContext } from '../../../context.ts';
import { forbidden, notFound } from '../../../platform/http/errors.ts';
import { callerOf } from '../../../platform/http/auth.ts';
import type { Api } from '../../../module.ts';
import { findUserById } from '../../users/service.ts';
import { claimsForScopes } from '../claims.ts';
import { ENDPOINTS } from '../provider.ts';

const UserInfo = Type.Object({
  sub: Type.String(),
  email: Type.Optional(Type.String()),
  email_verified: Type.Optional(Type.Boolean()),
  name: Type.Optional(Type.String()),
  given_name: Type.Optional(Type.String()),
  family_name: Type.Optional(Type.String()),
  updated_at: Type.Optional(Type.Integer()),
});

export function userinfoRoute(app: Api, ctx: AppContext): void {
  app.route({
    method: ['GET', 'POST'],
    url: ENDPOINTS.userinfo,
    config: { auth: { permission: 'authenticated', credentials: ['oauth'], oauthScope: 'openid' } },
    schema: { tags: ['OAuth'], summary: 'OpenID Connect userinfo: claims of the signed-in user, as the token\'s scopes allow', response: { 200: UserInfo } },
    handler: async (request) => {
      const principal = callerOf(request);
      if (!principal.userId) throw forbidden('A client credentials token has no user');
      const user = await findUserById(ctx.db, principal.userId);
      if (!user) throw notFound('User');
      return claimsForScopes(user, principal.scopes ?? new Set<string>());
    },
  });
}
