// Revoked grants in the audit log, in the project of the grant's OAuth client (the deployment's, for
// Atrium's own console and CLI), written in the transaction that deletes the grant (adapter.ts).
// A client revoking a refresh token at /oauth/revoke revokes its grant and every token issued under
// it; so does a code or refresh token presented a second time (RFC 9700 §4.14.2), and a user
// signing out of an application. The target is the grant, never a token's value.
import Provider from 'oidc-provider';
import type { AppContext } from '../../context.ts';
import type { AuditActor } from '../../platform/audit/log.ts';
import { REQUEST_ID_HEADER } from '../../platform/http/request-id.ts';
import { findOAuthClient } from '../oauth-clients/service.ts';
import type { OnGrantRevoked } from './adapter.ts';

/** The events, with what they mean (docs/audit-log.md lists them). */
export const REVOCATION_EVENTS = {
  'oauth_grant.revoke': 'An application\'s grant was revoked with every token issued under it: by its client at `/oauth/revoke` (the actor is the client), or by the user signing out of the application (the actor is the user)',
  'oauth_grant.revoke_replayed': 'An authorization code or refresh token was presented a second time, so its grant was revoked with every token issued under it (the actor is the client that presented it)',
} as const;

const header = (value: unknown) => (typeof value === 'string' ? value : undefined);

export function recordRevocation(ctx: AppContext): OnGrantRevoked {
  return async (tx, { grantId, clientId, accountId, replayed }) => {
    const kctx = Provider.ctx;
    const route = kctx?.oidc.route;
    // The token endpoint revokes a grant only for a code or refresh token used again.
    const replay = replayed || route === 'token';
    const client = clientId ? await findOAuthClient(tx, clientId) : undefined;
    const actor: AuditActor = route === 'end_session' && !replay
      ? { type: 'user', id: accountId, credentialKind: 'session', oauthClientId: clientId }
      : { type: 'oauth_client', id: clientId, name: client?.name, credentialKind: 'oauth_client', credentialId: clientId, oauthClientId: clientId };
    await ctx.audit.write(tx, {
      projectId: client?.projectId ?? null,
      actor,
      action: replay ? 'oauth_grant.revoke_replayed' : 'oauth_grant.revoke',
      target: { type: 'oauth_grant', id: grantId },
      outcome: 'succeeded',
      origin: kctx && { requestId: header(kctx.res.getHeader(REQUEST_ID_HEADER)), clientAddress: kctx.ip, userAgent: header(kctx.req.headers['user-agent']) },
    });
  };
}
