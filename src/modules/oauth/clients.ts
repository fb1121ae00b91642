// Project-owned OAuth clients as the authorization server sees them: oidc-provider metadata built
// from an oauth_clients row, hashed secret checks, and the branding shown on sign-in pages.
import type { ClientMetadata, ClientStatic } from 'oidc-provider';
import type { Db } from '../../platform/db/engine.ts';
import { secretMatches } from '../../platform/crypto/secrets.ts';
import { allowedOriginsOf, findOAuthClient, type OAuthClientRow } from '../oauth-clients/service.ts';
import { ACT_AS_USER_SCOPE, DEVICE_CODE_GRANT, firstPartyName } from './first-party.ts';
import { ALL_SCOPES } from './scopes.ts';

/** Client metadata property carrying the owning project into tokens. */
export const PROJECT_PROPERTY = 'atrium_project_id';
/** Client metadata property carrying the browser origins the client allows (CORS). */
export const ORIGINS_PROPERTY = 'atrium_allowed_origins';

const SUPPORTED_GRANTS = new Set(['authorization_code', 'refresh_token', 'client_credentials', DEVICE_CODE_GRANT]);

// The library insists on a client_secret value for secret-based authentication. We hand it the
// SHA-256 of the secret, marked, and compare against that (compareClientSecret below); the
// symmetric keys it would derive from the value are never used because HS* algorithms are off.
const HASHED = 'sha256:';

/**
 * oidc-provider metadata for a stored client. Registration-time rules live in the management API;
 * this mapping only narrows what the server offers: the authorization code flow is the only
 * redirect-based flow (no implicit or hybrid response types, RFC 9700 §2.1.2), and scopes outside
 * the server's list are dropped rather than breaking the client.
 */
export function clientMetadata(row: OAuthClientRow): ClientMetadata {
  const grants = row.grantTypes.filter((g) => SUPPORTED_GRANTS.has(g));
  const codeFlow = grants.includes('authorization_code') && row.responseTypes.includes('code') && row.redirectUris.length > 0;
  const grantTypes = codeFlow ? grants : grants.filter((g) => g !== 'authorization_code' && g !== 'refresh_token');
  // Private-use schemes (com.example.app:/cb) are native apps (RFC 8252).
  const native = row.redirectUris.some((uri) => !/^https?:/i.test(uri));
  const logo = logoUrl(row.metadata.logo_url);
  return {
    client_id: row.clientId,
    client_name: row.name || row.clientId,
    application_type: native ? 'native' : 'web',
    ...(row.secretHash
      ? { client_secret: `${HASHED}${row.secretHash.toString('hex')}`, token_endpoint_auth_method: 'client_secret_basic' }
      : { token_endpoint_auth_method: 'none' }),
    redirect_uris: codeFlow ? row.redirectUris : [],
    post_logout_redirect_uris: [],
    grant_types: grantTypes,
    response_types: codeFlow ? ['code'] : [],
    // ACT_AS_USER_SCOPE belongs to Atrium's own clients, whatever a stored row says.
    scope: row.scope.split(/\s+/).filter((s) => ALL_SCOPES.includes(s) && s !== ACT_AS_USER_SCOPE).join(' '),
    ...(logo ? { logo_uri: logo } : {}),
    [PROJECT_PROPERTY]: row.projectId,
    [ORIGINS_PROPERTY]: allowedOriginsOf(row),
  };
}

/** Makes the provider compare presented secrets with stored SHA-256 hashes, in constant time. */
export function useHashedSecrets(Client: ClientStatic): void {
  Client.prototype.compareClientSecret = async function compareHashed(this: { clientSecret?: string }, actual: string): Promise<boolean> {
    const stored = this.clientSecret;
    if (typeof stored !== 'string' || !stored.startsWith(HASHED) || typeof actual !== 'string') return false;
    return secretMatches(actual, Buffer.from(stored.slice(HASHED.length), 'hex'));
  };
}

function logoUrl(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const url = URL.parse(value);
  return url && (url.protocol === 'https:' || url.protocol === 'http:') && !url.username && !url.password ? url.href : undefined;
}

export type Theme = 'light' | 'dark' | 'auto';

export interface Branding {
  clientId: string;
  name: string;
  /** The client's logo; undefined shows the Atrium logo. */
  logoUrl: string | undefined;
  theme: Theme;
}

/** How sign-in pages present a client, or undefined for an unknown client. */
export async function clientBranding(db: Db, clientId: string | undefined): Promise<Branding | undefined> {
  if (!clientId) return undefined;
  const builtIn = firstPartyName(clientId);
  if (builtIn) return { clientId, name: builtIn, logoUrl: undefined, theme: 'auto' };
  const row = await findOAuthClient(db, clientId);
  if (!row) return undefined;
  const theme = row.metadata.theme;
  return {
    clientId,
    name: row.name || clientId,
    logoUrl: logoUrl(row.metadata.logo_url),
    theme: theme === 'light' || theme === 'dark' ? theme : 'auto',
  };
}
