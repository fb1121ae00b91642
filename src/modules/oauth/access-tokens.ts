// OAuth access tokens as the third credential kind of the Atrium API. They are JWTs (RFC 9068)
// signed with the service's keys, so checking one costs a signature check plus two indexed lookups
// (is the grant still alive, does the client still exist), and the result is cached by Auth for at
// most ATRIUM_AUTH_CACHE_SECONDS. Revoking a grant (refresh token revocation, reuse detection,
// password reset) or deleting a client therefore stops its tokens within that time.
import { decodeProtectedHeader, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import type { AppContext } from '../../context.ts';
import { isUuid } from '../../platform/crypto/credentials.ts';
import type { CredentialVerifier, Principal } from '../../platform/http/auth.ts';
import { findOAuthClient } from '../oauth-clients/service.ts';
import { findUserById } from '../users/service.ts';
import { ACT_AS_USER_SCOPE, isFirstParty } from './first-party.ts';
import { oauthIssuer } from './provider.ts';
import { expandScopes } from './scopes.ts';
import { grantIsLive } from './store.ts';

/** Claims Atrium adds to its access tokens. */
export interface AtriumAccessTokenClaims extends JWTPayload {
  client_id: string;
  scope?: string;
  /** The client's project; absent for first-party clients, whose tokens act across the user's projects. */
  project_id?: string;
  /** The grant the token was issued under; absent for client_credentials tokens (no user). */
  grant_id?: string;
  /** When and how the user signed in. */
  auth_time?: number;
  amr?: string[];
}

export function accessTokenVerifier(ctx: AppContext): CredentialVerifier {
  const { issuer, apiAudience: audience } = oauthIssuer(ctx.config);
  return {
    kind: 'oauth',
    // A compact JWS whose header is JSON ("eyJ"); API keys and personal tokens look nothing like it.
    matches: (token) => token.startsWith('eyJ') && token.split('.').length === 3,
    async verify(token) {
      let claims: AtriumAccessTokenClaims;
      try {
        const { kid } = decodeProtectedHeader(token);
        const key = kid ? await ctx.keys.findVerifyKey(kid) : undefined;
        if (!key) return undefined;
        ({ payload: claims } = await jwtVerify<AtriumAccessTokenClaims>(token, key, { issuer, audience, typ: 'at+jwt', algorithms: ['ES256'] }));
      } catch (error) {
        if (error instanceof joseErrors.JOSEError || error instanceof TypeError) return undefined;
        throw error;
      }
      // A sender-constrained (DPoP) token is worthless without its proof; the API takes Bearer only.
      if (claims.cnf !== undefined || typeof claims.client_id !== 'string' || typeof claims.sub !== 'string') return undefined;
      const scopes = expandScopes(claims.scope);

      if (typeof claims.grant_id === 'string') {
        if (!isUuid(claims.sub)) return undefined;
        const [live, user, client] = await Promise.all([
          grantIsLive(ctx.db, claims.grant_id),
          findUserById(ctx.db, claims.sub),
          isFirstParty(claims.client_id) ? undefined : findOAuthClient(ctx.db, claims.client_id),
        ]);
        if (!live || !user?.emailVerifiedAt) return undefined;
        let projectId: string | undefined;
        if (!isFirstParty(claims.client_id)) {
          if (!client || client.projectId !== claims.project_id) return undefined;
          projectId = client.projectId;
        }
        // Atrium's own console and CLI, signed in with ACT_AS_USER_SCOPE, act as the user (a `user`
        // credential) everywhere; every other token is an `oauth` credential limited to its scopes.
        const kind = isFirstParty(claims.client_id) && scopes.has(ACT_AS_USER_SCOPE) ? 'user' : 'oauth';
        const authTime = typeof claims.auth_time === 'number' ? claims.auth_time : undefined;
        return { kind, credentialId: claims.grant_id, userId: user.id, projectId, scopes, clientId: claims.client_id, authTime, name: user.email } satisfies Principal;
      }

      // client_credentials: the client acting for itself. It has no user, so it holds no project
      // role and no user's profile: every route that needs either refuses it (least privilege).
      if (isFirstParty(claims.client_id) || claims.sub !== claims.client_id) return undefined;
      const client = await findOAuthClient(ctx.db, claims.client_id);
      if (!client || client.projectId !== claims.project_id) return undefined;
      return { kind: 'oauth', credentialId: claims.jti ?? claims.client_id, userId: undefined, projectId: client.projectId, scopes, clientId: client.clientId, name: client.name || client.clientId } satisfies Principal;
    },
  };
}
