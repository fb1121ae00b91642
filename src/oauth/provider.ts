// The oidc-provider instance: Atrium's OAuth 2.0 / OpenID Connect authorization server. One issuer
// (the public URL) for the whole service; project tenancy is an attribute of each client.
import Provider, { errors, interactionPolicy, type Account, type Client, type KoaContextWithOIDC } from 'oidc-provider';
import type { AppContext } from '../context.ts';
import { isUuid } from '../platform/crypto/credentials.ts';
import { findUserById } from '../modules/users/service.ts';
import { adapterClass } from './adapter.ts';
import { PROJECT_PROPERTY, clientBranding, useHashedSecrets } from './clients.ts';
import { firstPartyClients } from './first-party.ts';
import type { SigninKeys } from './keys.ts';
import { deviceConfirmPage, deviceInputPage, deviceSuccessPage, errorPage, logoutPage, messagePage, type Page } from './pages.ts';
import { ACCESS_TOKEN_SCOPES, ALL_SCOPES } from './scopes.ts';

/** Lifetimes, in seconds. Access tokens are short because a JWT cannot be recalled once issued. */
export const TTL = {
  AccessToken: 10 * 60,
  ClientCredentials: 10 * 60,
  AuthorizationCode: 60,
  DeviceCode: 10 * 60,
  IdToken: 60 * 60,
  Interaction: 60 * 60,
  Session: 14 * 24 * 3600,
  // A refresh token lapses after 30 days unused; rotation gives each use a fresh one, and the
  // grant caps the whole family at a year.
  RefreshToken: 30 * 24 * 3600,
  Grant: 365 * 24 * 3600,
  BackchannelAuthenticationRequest: 10 * 60,
  PreAuthorizedCode: 10 * 60,
} as const;

export const ENDPOINTS = {
  authorization: '/oauth/authorize',
  token: '/oauth/token',
  jwks: '/oauth/jwks',
  revocation: '/oauth/revoke',
  introspection: '/oauth/introspect',
  device_authorization: '/oauth/device/auth',
  code_verification: '/oauth/device',
  end_session: '/oauth/logout',
  pushed_authorization_request: '/oauth/par',
  userinfo: '/oauth/userinfo',
  registration: '/oauth/register',
  backchannel_authentication: '/oauth/backchannel',
  challenge: '/oauth/challenge',
  credential: '/oauth/credential',
} as const;

function render(ctx: KoaContextWithOIDC, result: Page): void {
  ctx.type = 'html';
  ctx.status = result.status;
  (ctx.set as (name: string, value: string) => void)('content-security-policy', result.csp);
  ctx.body = result.html;
}

/**
 * The library's prompts, plus one login check: a browser session whose account can no longer sign
 * in (deleted, or its address unconfirmed) is asked to sign in again instead of being trusted.
 */
function signinPolicy() {
  const policy = interactionPolicy.base();
  policy.get('login')!.checks.push(new interactionPolicy.Check(
    'account_unavailable',
    'the signed-in account can no longer sign in',
    'login_required',
    (kctx: KoaContextWithOIDC) => Boolean((kctx.oidc.session as { accountId?: string } | undefined)?.accountId && !kctx.oidc.account),
  ));
  return policy;
}

export interface OAuthServer {
  provider: Provider;
  issuer: string;
  /** The resource indicator and audience of access tokens for the Atrium API. */
  apiAudience: string;
}

/** The issuer is the public URL; access tokens for the Atrium API name it as their audience too. */
export function oauthIssuer(config: Pick<AppContext['config'], 'publicUrl'>): { issuer: string; apiAudience: string } {
  return { issuer: config.publicUrl, apiAudience: config.publicUrl };
}

export async function createProvider(ctx: AppContext, keys: SigninKeys): Promise<OAuthServer> {
  const { issuer, apiAudience } = oauthIssuer(ctx.config);
  const secure = issuer.startsWith('https:');
  const cookiePrefix = secure ? '__Secure-' : '';
  const clientScopes = (client: Client) => new Set((client.scope ?? '').split(' ').filter(Boolean));

  const provider = new Provider(issuer, {
    adapter: adapterClass(ctx.db, ctx.config.authCacheMs),
    clients: firstPartyClients(issuer),
    clientDefaults: {
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
      id_token_signed_response_alg: 'ES256',
    },
    // Secrets are stored hashed, which rules out client_secret_jwt (it needs the secret itself).
    clientAuthMethods: ['client_secret_basic', 'client_secret_post', 'none'],
    extraClientMetadata: { properties: [PROJECT_PROPERTY] },
    jwks: { keys: await ctx.keys.privateJwks() },
    enabledJWA: {
      idTokenSigningAlgValues: ['ES256'],
      userinfoSigningAlgValues: ['ES256'],
      introspectionSigningAlgValues: ['ES256'],
      authorizationSigningAlgValues: ['ES256'],
      requestObjectSigningAlgValues: ['ES256'],
      clientAuthSigningAlgValues: ['ES256'],
    },
    cookies: {
      names: { session: `${cookiePrefix}atrium_session`, interaction: `${cookiePrefix}atrium_interaction`, resume: `${cookiePrefix}atrium_resume` },
      keys: [keys.cookie],
      long: { httpOnly: true, sameSite: 'lax' },
      short: { httpOnly: true, sameSite: 'lax' },
    },
    claims: {
      openid: ['sub'],
      email: ['email', 'email_verified'],
      profile: ['name', 'given_name', 'family_name', 'updated_at'],
    },
    // Every scope the server knows is an authorization-server scope, so a client asking for one
    // outside its registered set gets invalid_scope instead of having it silently dropped.
    scopes: [...ALL_SCOPES],
    responseTypes: ['code'],
    pkce: { required: () => true },
    allowOmittingSingleRegisteredRedirectUri: false,
    rotateRefreshToken: true,
    // Clients registered for refresh_token get one with every code (SPEC: "add refresh_token for
    // long-lived sessions"); without offline_access it still ends with the browser session.
    issueRefreshToken: async (_ctx: unknown, client: Client) => client.grantTypeAllowed('refresh_token'),
    routes: ENDPOINTS,
    ttl: { ...TTL },
    interactions: { policy: signinPolicy(), url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    discovery: {
      // Served by Atrium itself (it accepts the JWT access tokens the provider cannot look up).
      userinfo_endpoint: `${issuer}${ENDPOINTS.userinfo}`,
      service_documentation: `${issuer}/docs`,
      claim_types_supported: ['normal'],
    },
    clientBasedCORS: (_ctx: unknown, origin: string, client: Client) =>
      origin !== 'null' && client.clientAuthMethod === 'none' && client.redirectUris.some((uri) => URL.parse(uri)?.origin === origin),
    async findAccount(_ctx: unknown, sub: string): Promise<Account | undefined> {
      if (!isUuid(sub)) return undefined;
      const user = await findUserById(ctx.db, sub);
      // An unconfirmed address cannot sign in or authorize, whatever session the browser holds.
      if (!user?.emailVerifiedAt) return undefined;
      const name = `${user.firstName} ${user.lastName}`.trim();
      return {
        accountId: user.id,
        claims: () => ({
          sub: user.id,
          email: user.email,
          email_verified: true,
          ...(name ? { name } : {}),
          ...(user.firstName ? { given_name: user.firstName } : {}),
          ...(user.lastName ? { family_name: user.lastName } : {}),
          updated_at: Math.floor(user.updatedAt.getTime() / 1000),
        }),
      };
    },
    formats: {
      customizers: {
        // Tokens carry the project of the client (tenancy) and the grant (revocation check).
        async jwt(_ctx: unknown, token: { grantId?: string; client?: Client }, jwt: { payload: Record<string, unknown> }) {
          if (token.grantId) jwt.payload.grant_id = token.grantId;
          const client = token.client as Record<string, unknown> | undefined;
          const projectId = client?.[PROJECT_PROPERTY] ?? client?.atriumProjectId;
          if (typeof projectId === 'string') jwt.payload.project_id = projectId;
        },
      },
    },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      // A client learns about and revokes only its own tokens: projects never see each other's.
      introspection: { enabled: true, allowedPolicy: async (_ctx: unknown, client: Client, token: { clientId?: string }) => token.clientId === client.clientId },
      revocation: { enabled: true, allowedPolicy: async (_ctx: unknown, client: Client, token: { clientId?: string }) => token.clientId === client.clientId },
      // Atrium answers /oauth/userinfo itself, for its own JWT access tokens.
      userinfo: { enabled: false },
      // The Atrium API authenticates Bearer tokens only; DPoP-bound tokens would not work there.
      dPoP: { enabled: false },
      rpInitiatedLogout: {
        enabled: true,
        logoutSource: async (kctx: KoaContextWithOIDC, form: string) => render(kctx, logoutPage(form)),
        postLogoutSuccessSource: async (kctx: KoaContextWithOIDC) => render(kctx, messagePage({ title: 'Signed out', message: 'You are signed out of Atrium on this browser.', role: 'status' })),
      },
      deviceFlow: {
        enabled: true,
        charset: 'base-20',
        mask: '****-****',
        userCodeInputSource: async (kctx: KoaContextWithOIDC, form: string, out: { user_code?: string } | undefined, err: Error & { userCode?: string } | undefined) => {
          let message: string | undefined;
          if (err && (err.userCode || err.name === 'NoCodeError')) message = 'That code is not valid or has expired. Check it and try again.';
          else if (err && err.name === 'AbortedError') message = 'The sign-in request was cancelled.';
          else if (err) message = 'Something went wrong. Start again on your device.';
          render(kctx, deviceInputPage(form, message, out?.user_code));
        },
        userCodeConfirmSource: async (kctx: KoaContextWithOIDC, form: string, client: Client, _deviceInfo: unknown, userCode: string) =>
          render(kctx, deviceConfirmPage(form, await clientBranding(ctx.db, client.clientId), userCode)),
        successSource: async (kctx: KoaContextWithOIDC) =>
          render(kctx, deviceSuccessPage(await clientBranding(ctx.db, kctx.oidc.client?.clientId))),
      },
      resourceIndicators: {
        enabled: true,
        // Every token is for the Atrium API unless a client names another resource (there is none).
        defaultResource: () => apiAudience,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: unknown, resource: string, client: Client) => {
          if (resource !== apiAudience && resource !== `${apiAudience}/`) throw new errors.InvalidTarget();
          const allowed = clientScopes(client);
          return {
            scope: ACCESS_TOKEN_SCOPES.filter((s) => allowed.size === 0 || allowed.has(s)).join(' '),
            audience: apiAudience,
            accessTokenTTL: TTL.AccessToken,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: 'ES256' } },
          };
        },
      },
    },
    // The library's default page echoes request details; ours names the problem and stops. It
    // is what an unknown client or an unregistered redirect_uri gets: a page, never a redirect.
    renderError: async (kctx: KoaContextWithOIDC, out: { error: string; error_description?: string }) => {
      render(kctx, errorPage({
        title: 'This sign-in request cannot continue',
        message: out.error === 'invalid_client' || out.error === 'invalid_redirect_uri'
          ? 'The application that sent you here is not set up correctly for Atrium sign-in. Nothing was shared with it.'
          : 'The request that brought you here is invalid or has expired. Return to the application and try again.',
        detail: `${out.error}${out.error_description ? `: ${out.error_description}` : ''}`,
        status: kctx.status >= 400 ? kctx.status : 400,
      }));
    },
  });
  provider.proxy = ctx.config.trustProxy;
  useHashedSecrets(provider.Client);

  provider.on('server_error', (_kctx: unknown, error: Error) => ctx.log.error({ err: error }, 'oauth server error'));
  provider.on('grant.revoked', (_kctx: unknown, grantId: string) => ctx.log.info({ grantId }, 'oauth grant revoked'));
  return { provider, issuer, apiAudience };
}
