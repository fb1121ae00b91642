// Clients built into the service, which need no registration: the `atrium` command line.

/** The CLI's client id (public client: PKCE, loopback redirects on any port, device flow). */
export const ATRIUM_CLI_CLIENT_ID = 'atrium-cli';

export const ATRIUM_CLI_SCOPE = 'openid profile email offline_access profile:read rooms:connect llm:invoke';

export const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

/**
 * oidc-provider metadata of the built-in clients. A native application's loopback redirect URIs
 * match on any port (RFC 8252 §7.3), so the CLI can listen wherever the OS lets it.
 */
export const FIRST_PARTY_CLIENTS = [
  {
    client_id: ATRIUM_CLI_CLIENT_ID,
    client_name: 'Atrium CLI',
    application_type: 'native',
    token_endpoint_auth_method: 'none',
    redirect_uris: ['http://127.0.0.1/callback', 'http://localhost/callback'],
    grant_types: ['authorization_code', 'refresh_token', DEVICE_CODE_GRANT],
    response_types: ['code'],
    scope: ATRIUM_CLI_SCOPE,
  },
] as const;

/** First-party tokens act for the user across all of their projects, not for one project. */
export function isFirstParty(clientId: string): boolean {
  return FIRST_PARTY_CLIENTS.some((c) => c.client_id === clientId);
}
