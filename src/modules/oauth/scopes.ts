// The scopes the authorization server knows — those a client may be registered with
// (src/modules/oauth-clients), and the one only Atrium's own console and CLI may ask for —, what each
// means in plain words on the consent page; an access token for the Atrium API carries every one granted.
import type { ClientScope } from '../oauth-clients/service.ts';
import { ACT_AS_USER_SCOPE } from './first-party.ts';

interface ScopeMeaning {
  /** The consent line, or the scope this one is an earlier name of (they share its line). */
  readonly consent: string | { readonly aliasOf: ClientScope };
}

/**
 * Every scope, in the order the consent page lists them. Exactly the ClientScope keys (the
 * registration list): a scope added there does not compile until it has a meaning here.
 */
const MEANINGS = {
  openid: { consent: 'Know who you are (your Atrium account id)' },
  profile: { consent: 'See your name' },
  email: { consent: 'See your email address' },
  'profile:read': { consent: 'Read your Atrium profile and your role in the project' },
  'rooms:connect': { consent: 'Join rooms you have access to, on your behalf' },
  'llm:invoke': { consent: 'Use AI models through the project\'s LLM proxy, billed to the project' },
  'secrets:proxy': { consent: 'Use secrets stored in the project on your behalf, without seeing them' },
  offline_access: { consent: 'Stay connected when you are not using the app' },
  llm_proxy: { consent: { aliasOf: 'llm:invoke' } },
} as const satisfies Record<ClientScope, ScopeMeaning>;

/** Scopes no project client can be registered with: only Atrium's own clients ask for them. */
const FIRST_PARTY_MEANINGS: Record<string, ScopeMeaning> = {
  [ACT_AS_USER_SCOPE]: { consent: 'Act as you in Atrium: every project you belong to, with your roles there' },
};

const entries: [string, ScopeMeaning][] = [...Object.entries(MEANINGS), ...Object.entries(FIRST_PARTY_MEANINGS)];

/**
 * Every scope, and so every scope an access token for the Atrium API may carry: all those granted.
 * The identity scopes say which claims /oauth/userinfo may return, and `offline_access` (which
 * governs the refresh token) is there too, so that the token response's `scope` — the access
 * token's (RFC 6749 §5.1) —, the refresh token's introspection and the token itself name the same
 * grant.
 */
export const ALL_SCOPES: readonly string[] = entries.map(([name]) => name);

/** Earlier names and the current scope they mean, both ways (llm_proxy ↔ llm:invoke). */
const ALIASES = new Map<string, string>(entries.flatMap(([name, m]) => (typeof m.consent === 'string' ? [] : [[name, m.consent.aliasOf], [m.consent.aliasOf, name]])));

/** A token's scopes with aliases added, so a route requiring llm:invoke accepts llm_proxy. */
export function expandScopes(scope: string | undefined): Set<string> {
  const scopes = new Set((scope ?? '').split(' ').filter(Boolean));
  for (const s of [...scopes]) {
    const alias = ALIASES.get(s);
    if (alias) scopes.add(alias);
  }
  return scopes;
}

/** Plain-words lines for the requested scopes; unknown scopes are not granted and not shown. */
export function describeScopes(scopes: Iterable<string>): string[] {
  const requested = expandScopes([...scopes].join(' '));
  return entries.flatMap(([name, m]) => (typeof m.consent === 'string' && requested.has(name) ? [m.consent] : []));
}
