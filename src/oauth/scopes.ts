// The scopes the authorization server knows, what each means in plain words (the consent page), and
// which of them an access token carries for the Atrium API.
import { ACT_AS_USER_SCOPE } from './first-party.ts';

/** Scopes that mean access to the Atrium API (and the LLM proxy). */
export const API_SCOPES = ['profile:read', 'rooms:connect', 'llm:invoke', 'secrets:proxy', 'llm_proxy'] as const;

/** OpenID Connect scopes. */
export const OIDC_SCOPES = ['openid', 'profile', 'email', 'offline_access'] as const;

export const ALL_SCOPES: readonly string[] = [...OIDC_SCOPES, ...API_SCOPES, ACT_AS_USER_SCOPE];

/**
 * Scopes an access token for the Atrium API carries. The identity scopes are included so that the
 * token says which claims /oauth/userinfo may return; offline_access only governs refresh tokens.
 */
export const ACCESS_TOKEN_SCOPES: readonly string[] = ['openid', 'profile', 'email', ...API_SCOPES, ACT_AS_USER_SCOPE];

/** Earlier names that mean the same as a current scope, both ways. */
const ALIASES: Record<string, string> = {
  llm_proxy: 'llm:invoke',
  'llm:invoke': 'llm_proxy',
};

/** A token's scopes with aliases added, so a route requiring llm:invoke accepts llm_proxy. */
export function expandScopes(scope: string | undefined): Set<string> {
  const scopes = new Set((scope ?? '').split(' ').filter(Boolean));
  for (const s of [...scopes]) {
    const alias = ALIASES[s];
    if (alias) scopes.add(alias);
  }
  return scopes;
}

/** Consent wording, in the order shown. Aliases share a line. */
const DESCRIPTIONS: [scopes: string[], text: string][] = [
  [['openid'], 'Know who you are (your Atrium account id)'],
  [['profile'], 'See your name'],
  [['email'], 'See your email address'],
  [['profile:read'], 'Read your Atrium profile and your role in the project'],
  [['rooms:connect'], 'Join rooms you have access to, on your behalf'],
  [['llm:invoke', 'llm_proxy'], 'Use AI models through the project\'s LLM proxy, billed to the project'],
  [['secrets:proxy'], 'Use secrets stored in the project on your behalf, without seeing them'],
  [[ACT_AS_USER_SCOPE], 'Act as you in Atrium: every project you belong to, with your roles there'],
  [['offline_access'], 'Stay connected when you are not using the app'],
];

/** Plain-words lines for the requested scopes; unknown scopes are not granted and not shown. */
export function describeScopes(scopes: Iterable<string>): string[] {
  const requested = new Set(scopes);
  return DESCRIPTIONS.filter(([names]) => names.some((n) => requested.has(n))).map(([, text]) => text);
}
