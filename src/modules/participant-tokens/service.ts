// Participant tokens: JWTs that grant room access, in the claim format of the official SDK's
// ParticipantToken (name, grants [{name, scope}], sub = project id, kid, version).
//
// Two issuers exist. Atrium signs with its own asymmetric key (ES256; the header kid names it, and
// room servers verify offline against /.well-known/jwks.json). Applications may also mint tokens
// themselves with the SDK from one of our API keys: HS256 keyed by the key's secret, with the key id
// in the `kid` claim. `validateParticipantToken` accepts both.
//
// No token carries more than the credential that signed or minted it (`capGrants`): Atrium caps
// what it mints at the minter, and a token an API key signed at what that key may do now, wherever
// it is used (validate, the LLM proxy, feeds), for as long as the key exists.
import { isDeepStrictEqual } from 'node:util';
import { decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import type { AppContext } from '../../context.ts';
import { isUuid } from '../../platform/crypto/credentials.ts';
import { sha256Hex } from '../../platform/crypto/secrets.ts';
import type { CredentialVerifier, Principal } from '../../platform/http/auth.ts';
import { narrowScope, type Actor, type Scope } from '../../platform/http/authority.ts';
import { ApiError, apiError, forbidden } from '../../platform/http/errors.ts';
import { effectiveRoles } from '../../platform/http/roles.ts';
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

/** A token's claims and signature checked; for one an API key signed, that key as its signer. */
async function verifyParticipantToken(ctx: AppContext, token: string): Promise<{ claims: ParticipantClaims; signer: Principal | undefined }> {
  let header;
  let claims;
  try {
    header = decodeProtectedHeader(token);
    claims = decodeJwt(token);
  } catch {
    throw invalid('Not a JWT');
  }
  let payload;
  let signer: Principal | undefined;
  try {
    if (header.alg === 'HS256') {
      const keyId = typeof claims.kid === 'string' ? claims.kid : undefined;
      const key = keyId && isUuid(keyId) ? await findApiKeySecret(ctx, keyId) : undefined;
      if (!key || key.principal.projectId !== claims.sub) throw invalid('Unknown or revoked API key');
      ({ payload } = await jwtVerify(token, new TextEncoder().encode(key.secret), { algorithms: ['HS256'] }));
      signer = key.principal;
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
  return { claims: payload as ParticipantClaims, signer };
}

/** The actor of the API key that signed a token, in the key's project. */
function signerActor(ctx: AppContext, signer: Principal): Actor {
  return ctx.authority.actor(signer, { projectId: signer.projectId!, roles: effectiveRoles(signer.keyRoles ?? ['admin']) });
}

/**
 * A token's claims, for room servers: a token Atrium minted as it is (it was capped when minted); one
 * an API key signed with only the grants that key may give now (`capGrants`), the rest dropped.
 */
export async function validateParticipantToken(ctx: AppContext, token: string): Promise<ParticipantClaims> {
  const { claims, signer } = await verifyParticipantToken(ctx, token);
  if (!signer) return claims;
  return { ...claims, grants: (await capGrants(ctx, signerActor(ctx, signer), claims.grants)).grants };
}

/** The ApiScope of a token's `api` grant, if it has one. */
export function apiScopeOf(grants: readonly Grant[] | undefined): Record<string, unknown> | undefined {
  const scope = grants?.find((g) => g.name === 'api')?.scope;
  return scope !== null && typeof scope === 'object' && !Array.isArray(scope) ? scope as Record<string, unknown> : undefined;
}

/** The roles a room server tells participants apart by (the SDK's ParticipantToken role grant). */
const PARTICIPANT_ROLES: readonly unknown[] = ['user', 'agent', 'tool'];

/** The legacy grant of tunnel ports: the `tunnels` surface by another name. */
const TUNNEL_PORTS = 'tunnel_ports';

/**
 * The grants a caller may put in a participant token, and what it may not (in words). A grant
 * naming a resource (a room, an agent, a feed) stays when the caller may take the actions it admits
 * there. The `api` grant's surfaces are at most what the caller gets in the rooms (or agents) the
 * token names — what connect gives it —, or, naming none, what its project roles give it in every
 * one; a surface that stands for a project role (`llm`) stays for holders of that role alone. A
 * `role` is one of the SDK's participant roles. Grants Atrium gives no meaning to pass as they are.
 */
export async function capGrants(ctx: AppContext, actor: Actor, grants: readonly Grant[]): Promise<{ grants: Grant[]; beyond: string[] }> {
  const { authority } = ctx;
  const kept: Grant[] = [];
  const beyond: string[] = [];
  const scopes: Scope[] = [];
  for (const grant of grants) {
    const naming = authority.namingGrant(grant.name);
    if (naming) {
      const named = await authority.mayName(actor, naming, grant.scope);
      if (!named.allowed) {
        beyond.push(`the grant ${JSON.stringify(grant)}: ${named.reason}`);
        continue;
      }
      if (named.scope) scopes.push(named.scope);
    } else if (grant.name === 'role' && !PARTICIPANT_ROLES.includes(grant.scope)) {
      beyond.push(`the grant ${JSON.stringify(grant)}: a participant's role is one of ${PARTICIPANT_ROLES.join(', ')}`);
      continue;
    }
    kept.push(grant);
  }
  const cap = scopes.length > 0 ? scopes.reduce((a, b) => narrowScope(a, b)) : authority.scopeEverywhere(actor, 'api');
  const capped = kept.map((grant) => {
    const wanted = grant.name === 'api' ? apiScopeOf([grant]) : undefined;
    if (!wanted) return grant;
    const scope = authority.capScope(actor, 'api', wanted, cap);
    for (const surface of Object.keys(wanted).filter((s) => !isDeepStrictEqual(wanted[s], scope[s]))) {
      beyond.push(`the api surface ${surface}: more than its signer may use where the token takes it`);
    }
    return { name: grant.name, scope };
  });
  const tunnels = capped.some((g) => g.name === 'api' && 'tunnels' in (g.scope as Scope));
  const result = capped.filter((g) => g.name !== TUNNEL_PORTS || tunnels);
  if (result.length < capped.length) beyond.push(`the grant ${TUNNEL_PORTS}: it needs the tunnels surface`);
  return { grants: result, beyond };
}

/** For minting: the grants, unless one goes beyond the minter (403 naming the first that does). */
export async function grantsWithin(ctx: AppContext, actor: Actor, grants: readonly Grant[]): Promise<Grant[]> {
  const { grants: capped, beyond } = await capGrants(ctx, actor, grants);
  if (beyond.length > 0) throw forbidden(`A participant token carries no more than its minter may do: ${beyond[0]}`);
  return capped;
}

/**
 * Participant tokens as a credential kind, for the routes that accept them (the LLM proxy, feed
 * publishing). A token the SDK signed with an API key is bound to that key: revoking the key stops
 * it (the key id is its credential id), and it may do no more than the key (its signer).
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
      let verified;
      try {
        verified = await verifyParticipantToken(ctx, token);
      } catch (error) {
        if (error instanceof ApiError) return undefined;
        throw error;
      }
      const { claims, signer } = verified;
      if (!isUuid(claims.sub)) return undefined;
      // The project roles the `api` grant stands for, of those the signing key holds (a surface it
      // lacks is dropped); what a grant naming a resource admits is decided on each request, against
      // the signer too.
      const actor = signer && signerActor(ctx, signer);
      const grants = claims.grants.map((grant) => {
        const scope = grant.name === 'api' ? apiScopeOf([grant]) : undefined;
        return scope && actor ? { name: grant.name, scope: ctx.authority.withoutUnheldRoles(actor, 'api', scope) } : grant;
      });
      const api = apiScopeOf(grants) ?? {};
      return {
        kind: 'participant',
        credentialId: signer ? signer.credentialId : `participant:${sha256Hex(token).slice(0, 32)}`,
        projectId: claims.sub,
        keyRoles: ctx.authority.tokenRoles.filter((rule) => rule.grant === 'api' && rule.surface in api).map((rule) => rule.role),
        grants,
        signer,
        name: claims.name,
      } satisfies Principal;
    },
  };
}
