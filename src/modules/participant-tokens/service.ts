// Participant tokens: JWTs that grant room access, in the claim format of the official SDK's
// ParticipantToken (name, grants [{name, scope}], sub = project id, kid, version).
//
// Two issuers exist. Atrium signs with its own asymmetric key (ES256; the header kid names it, and
// room servers verify offline against /.well-known/jwks.json). Applications may also mint tokens
// themselves with the SDK from one of our API keys: HS256 keyed by the key's secret, with the key id
// in the `kid` claim. `validateParticipantToken` accepts both.
import { decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import type { AppContext } from '../../context.ts';
import { isUuid } from '../../platform/crypto/credentials.ts';
import { sha256Hex } from '../../platform/crypto/secrets.ts';
import type { CredentialVerifier, Principal } from '../../platform/http/auth.ts';
import { ApiError, apiError } from '../../platform/http/errors.ts';
import type { Role } from '../../platform/http/roles.ts';
import { findApiKeySecret } from '../api-keys/service.ts';

export const TOKEN_VERSION = '0.39.9';
export const DEFAULT_TOKEN_TTL_SECONDS = 3600;

export interface Grant {
  name: string;
  scope: unknown;
}

export interface ParticipantClaims {
  name: string;
  grants: Grant[];
  sub: string;
  kid?: string;
  version: string;
  iat?: number;
  exp?: number;
  [claim: string]: unknown;
}

/** Full room access (the SDK's `ApiScope.full()`): every surface present with its defaults. */
export const FULL_SCOPE = Object.fromEntries(
  ['livekit', 'queues', 'messaging', 'dataset', 'memory', 'sync', 'storage', 'containers', 'developer', 'agents', 'llm', 'admin', 'secrets', 'tunnels', 'services'].map((k) => [k, {}]),
);

/** Default access of a room participant (the SDK's `ApiScope.userDefault()`). */
export const USER_SCOPE = Object.fromEntries(
  ['livekit', 'queues', 'messaging', 'dataset', 'memory', 'sync', 'storage', 'containers', 'developer', 'agents', 'secrets', 'services'].map((k) => [k, {}]),
);

export function issueParticipantToken(ctx: AppContext, input: { projectId: string; name: string; grants: Grant[]; ttlSeconds?: number }): string {
  const iat = Math.floor(Date.now() / 1000);
  return ctx.keys.signJwt({
    name: input.name, grants: input.grants, kid: ctx.keys.current.kid, version: TOKEN_VERSION,
    sub: input.projectId, iss: ctx.config.publicUrl, iat, exp: iat + (input.ttlSeconds ?? DEFAULT_TOKEN_TTL_SECONDS),
  });
}

const invalid = (message: string) => apiError('invalid_token', message);

export async function validateParticipantToken(ctx: AppContext, token: string): Promise<ParticipantClaims> {
  let header;
  let claims;
  try {
    header = decodeProtectedHeader(token);
    claims = decodeJwt(token);
  } catch {
    throw invalid('Not a JWT');
  }
  let payload;
  try {
    if (header.alg === 'HS256') {
      const keyId = typeof claims.kid === 'string' ? claims.kid : undefined;
      const secret = keyId && isUuid(keyId) ? await findApiKeySecret(ctx, keyId) : undefined;
      if (!secret || secret.projectId !== claims.sub) throw invalid('Unknown or revoked API key');
      ({ payload } = await jwtVerify(token, new TextEncoder().encode(secret.secret), { algorithms: ['HS256'] }));
    } else {
      const key = header.kid ? await ctx.keys.findVerifyKey(header.kid) : undefined;
      if (!key) throw invalid('Unknown signing key');
      ({ payload } = await jwtVerify(token, key, { algorithms: [header.alg ?? ''], issuer: ctx.config.publicUrl }));
    }
  } catch (error) {
    if (error instanceof ApiError) throw error;
    throw invalid(`Token rejected: ${(error as Error).message}`);
  }
  if (typeof payload.name !== 'string' || !Array.isArray(payload.grants) || typeof payload.sub !== 'string') {
    throw invalid('Not a participant token (needs name, grants and sub)');
  }
  return payload as ParticipantClaims;
}

/** The ApiScope of a token's `api` grant, if it has one. */
export function apiScopeOf(grants: readonly Grant[] | undefined): Record<string, unknown> | undefined {
  const scope = grants?.find((g) => g.name === 'api')?.scope;
  return scope !== null && typeof scope === 'object' && !Array.isArray(scope) ? scope as Record<string, unknown> : undefined;
}

/** What a token's grants amount to in its project: an `api` grant with `llm` makes an LLM proxy user. */
function rolesOfGrants(grants: readonly Grant[]): Role[] {
  return apiScopeOf(grants)?.llm !== undefined ? ['llm_proxy_user'] : [];
}

/**
 * Participant tokens as a credential kind, for the routes that accept them (the LLM proxy, feed
 * publishing). A token the SDK signed with an API key is bound to that key: revoking the key stops
 * it (the key id is its credential id).
 */
export function participantTokenVerifier(ctx: AppContext): CredentialVerifier {
  return {
    kind: 'participant',
    // A JWT that is not an OAuth access token (those are typed `at+jwt`).
    matches(token) {
      if (!token.startsWith('eyJ') || token.split('.').length !== 3) return false;
      try {
        return decodeProtectedHeader(token).typ !== 'at+jwt';
      } catch {
        return false;
      }
    },
    async verify(token) {
      let claims: ParticipantClaims;
      try {
        claims = await validateParticipantToken(ctx, token);
      } catch (error) {
        if (error instanceof ApiError) return undefined;
        throw error;
      }
      if (!isUuid(claims.sub)) return undefined;
      const signedByKey = typeof claims.kid === 'string' && decodeProtectedHeader(token).alg === 'HS256';
      return {
        kind: 'participant',
        credentialId: signedByKey ? claims.kid! : `participant:${sha256Hex(token).slice(0, 32)}`,
        projectId: claims.sub,
        keyRoles: rolesOfGrants(claims.grants),
        grants: claims.grants,
        name: claims.name,
      } satisfies Principal;
    },
  };
}
