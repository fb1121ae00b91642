// Clients built into the service, which need no registration: the `atrium` command line and the
// web console. They are Atrium itself, so with the ACT_AS_USER_SCOPE their access tokens act as
// the signed-in user on every route, in every project the user belongs to (access-tokens.ts).

/** The CLI's client id (public client: PKCE, loopback redirects on any port, device flow). */
export const ATRIUM_CLI_CLIENT_ID = 'atrium-cli';

/** The web console's client id (public client: PKCE, redirects to the console on the public URL). */
export const ATRIUM_CONSOLE_CLIENT_ID = 'atrium-console';

/**
 * Granted only to first-party clients (project clients cannot be registered with it): their token
 * is then a `user` credential, like a personal access token, instead of a scoped OAuth token.
 */
export const ACT_AS_USER_SCOPE = 'atrium:user';

export const ATRIUM_CLI_SCOPE = `openid profile email offline_access profile:read rooms:connect llm:invoke ${ACT_AS_USER_SCOPE}`;

export const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

const NAMES: Record<string, string> = { [ATRIUM_CLI_CLIENT_ID]: 'Atrium CLI', [ATRIUM_CONSOLE_CLIENT_ID]: 'Atrium console' };

/**
 * oidc-provider metadata of the built-in clients. A native application's loopback redirect URIs
 * match on any port (RFC 8252 §7.3), so the CLI can listen wherever the OS lets it; the console
 * lives on the issuer itself.
 */
export function firstPartyClients(issuer: string) {
  return [
    {
      client_id: ATRIUM_CLI_CLIENT_ID,
      client_name: NAMES[ATRIUM_CLI_CLIENT_ID],
      application_type: 'native',
      token_endpoint_auth_method: 'none',
      redirect_uris: ['http://127.0.0.1/callback', 'http://localhost/callback'],
      grant_types: ['authorization_code', 'refresh_token', DEVICE_CODE_GRANT],
      response_types: ['code'],
      scope: ATRIUM_CLI_SCOPE,
    },
    {
      client_id: ATRIUM_CONSOLE_CLIENT_ID,
      client_name: NAMES[ATRIUM_CONSOLE_CLIENT_ID],
      application_type: 'web',
      token_endpoint_auth_method: 'none',
      redirect_uris: [`${issuer}/console/callback`],
      post_logout_redirect_uris: [`${issuer}/console/signed-out`],
      // No offline_access: the console's refresh token ends with the browser session (sign-out).
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      scope: `openid profile email ${ACT_AS_USER_SCOPE}`,
    },
  ];
}

/** The display name of a built-in client, or undefined for any other client id. */
export function firstPartyName(clientId: string): string | undefined {
  return Object.hasOwn(NAMES, clientId) ? NAMES[clientId] : undefined;
}

/** First-party tokens act for the user across all of their projects, not for one project. */
export function isFirstParty(clientId: string): boolean {
  return firstPartyName(clientId) !== undefined;
}
