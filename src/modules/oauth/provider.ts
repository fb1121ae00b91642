// The oidc-provider instance: Atrium's OAuth 2.0 / OpenID Connect authorization server. One issuer
// (the public URL) for the whole service; project tenancy is an attribute of each client.
import Provider, { errors, interactionPolicy, type Account, type Client, type KoaContextWithOIDC } from 'oidc-provider';
import type { AppContext } from '../../context.ts';
import { isUuid } from '../../platform/crypto/credentials.ts';
import { findUserById } from '../users/service.ts';
import { adapterClass } from './adapter.ts';
import { MFA_ACR, asksForSecondFactor } from './amr.ts';
import { SCOPE_CLAIMS, userClaims } from './claims.ts';
import { ORIGINS_PROPERTY, PROJECT_PROPERTY, useHashedSecrets } from './clients.ts';
import { ATRIUM_CONSOLE_CLIENT_ID, firstPartyClients } from './first-party.ts';
import type { SigninKeys } from './keys.ts';
import reloadKeystore from 'oidc-provider/lib/helpers/initialize_keystore.js';
import { USER_CODE, deviceFlowSources, logoutSources, renderError } from './protocol/sources.ts';
import { recordRevocation } from './revocations.ts';
import { ALL_SCOPES } from './scopes.ts';

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

/**
 * The library's prompts, plus two login checks: a browser session whose account can no longer sign
 * in (deleted, or its address unconfirmed) is asked to sign in again instead of being trusted; and a
 * client asking for two factors (`acr_values`) gets a new sign-in unless the session had them.
 */
function signinPolicy() {
  const policy = interactionPolicy.base();
  policy.get('login')!.checks.push(new interactionPolicy.Check(
    'account_unavailable',
    'the signed-in account can no longer sign in',
    'login_required',
    (kctx: KoaContextWithOIDC) => Boolean((kctx.oidc.session as { accountId?: string } | undefined)?.accountId && !kctx.oidc.account),
  ));
  policy.get('login')!.checks.push(new interactionPolicy.Check(
    'second_factor_requested',
    'the client asks for a sign-in with two factors',
    'login_required',
    (kctx: KoaContextWithOIDC) => asksForSecondFactor(kctx.oidc.params ?? {})
      && Boolean((kctx.oidc.session as { accountId?: string } | undefined)?.accountId)
      && kctx.oidc.acr !== MFA_ACR
      && !(kctx.oidc as { result?: { login?: unknown } }).result?.login,
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
  const ownOrigin = new URL(issuer).origin;
  const cookiePrefix = secure ? '__Secure-' : '';
  const clientScopes = (client: Client) => new Set((client.scope ?? '').split(' ').filter(Boolean));

  const provider = new Provider(issuer, {
    adapter: adapterClass(ctx.db, ctx.config.authCacheMs, recordRevocation(ctx)),
    clients: firstPartyClients(issuer),
    clientDefaults: {
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
      id_token_signed_response_alg: 'ES256',
    },
    // Secrets are stored hashed, which rules out client_secret_jwt (it needs the secret itself).
    clientAuthMethods: ['client_secret_basic', 'client_secret_post', 'none'],
    extraClientMetadata: { properties: [PROJECT_PROPERTY, ORIGINS_PROPERTY] },
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
      keys: keys.cookie,
      long: { httpOnly: true, sameSite: 'lax' },
      short: { httpOnly: true, sameSite: 'lax' },
    },
    // The library puts acr, amr and auth_time in an ID token only when a client asked for them; with
    // `openid` every ID token says when and how the user signed in (amr.ts).
    claims: { ...SCOPE_CLAIMS, openid: [...SCOPE_CLAIMS.openid, 'auth_time', 'acr', 'amr'] },
    acrValues: [MFA_ACR],
    // Every scope the server knows is an authorization-server scope, so a client asking for one
    // outside its registered set gets invalid_scope instead of having it silently dropped.
    scopes: [...ALL_SCOPES],
    responseTypes: ['code'],
    pkce: { required: () => true },
    allowOmittingSingleRegisteredRedirectUri: false,
    rotateRefreshToken: true,
    // Clients registered for refresh_token get one with every code, for long-lived sessions; without
    // offline_access it still ends with the browser session.
    issueRefreshToken: async (_ctx: unknown, client: Client) => client.grantTypeAllowed('refresh_token'),
    routes: ENDPOINTS,
    ttl: { ...TTL },
    interactions: { policy: signinPolicy(), url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    // The console is Atrium itself, on the issuer's own origin and redirect URI: signing in to it is
    // consent enough, so its grant is made at sign-in instead of on a consent page. Every other
    // client (the CLI too, whose device flow a consent page guards against phishing) asks.
    async loadExistingGrant(kctx: KoaContextWithOIDC) {
      const { oidc } = kctx;
      const grantId = (oidc.result as { consent?: { grantId?: string } } | undefined)?.consent?.grantId ?? oidc.session!.grantIdFor(oidc.client!.clientId);
      if (grantId) return oidc.provider.Grant.find(grantId);
      if (oidc.client!.clientId !== ATRIUM_CONSOLE_CLIENT_ID) return undefined;
      const grant = new oidc.provider.Grant({ clientId: oidc.client!.clientId, accountId: oidc.session!.accountId! });
      grant.addOIDCScope(oidc.client!.scope!);
      grant.addResourceScope(apiAudience, oidc.client!.scope!);
      await grant.save();
      return grant;
    },
    discovery: {
      // Served by Atrium itself (it accepts the JWT access tokens the provider cannot look up).
      userinfo_endpoint: `${issuer}${ENDPOINTS.userinfo}`,
      service_documentation: `${issuer}/docs`,
      claim_types_supported: ['normal'],
    },
    // The same rule as Atrium's own browser-callable endpoints (src/platform/http/cors.ts).
    // Atrium's own pages (the console) call from the issuer's origin: same-origin, never cross-site.
    clientBasedCORS: (_ctx: unknown, origin: string, client: Client) =>
      origin !== 'null' && (origin === ownOrigin || ctx.config.corsOrigins.includes(origin) || clientOrigins(client).includes(origin)),
    async findAccount(_ctx: unknown, sub: string): Promise<Account | undefined> {
      if (!isUuid(sub)) return undefined;
      const user = await findUserById(ctx.db, sub);
      // An unconfirmed address cannot sign in or authorize, whatever session the browser holds.
      if (!user?.emailVerifiedAt) return undefined;
      return { accountId: user.id, claims: () => ({ ...userClaims(user) }) };
    },
    formats: {
      customizers: {
        // Tokens carry the project of the client (tenancy), the grant (revocation check), and when
        // and how the user signed in (RFC 9068 §2.2.1): changing second factors needs a recent sign-in.
        async jwt(kctx: KoaContextWithOIDC | undefined, token: { grantId?: string; client?: Client }, jwt: { payload: Record<string, unknown> }) {
          if (token.grantId) jwt.payload.grant_id = token.grantId;
          const entities = kctx?.oidc?.entities as Record<string, { authTime?: number; amr?: string[] } | undefined> | undefined;
          const signin = entities?.AuthorizationCode ?? entities?.RefreshToken ?? entities?.DeviceCode;
          if (token.grantId && typeof signin?.authTime === 'number') jwt.payload.auth_time = signin.authTime;
          if (token.grantId && Array.isArray(signin?.amr)) jwt.payload.amr = signin.amr;
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
      rpInitiatedLogout: { enabled: true, ...logoutSources },
      deviceFlow: {
        enabled: true,
        ...USER_CODE,
        ...deviceFlowSources(ctx.db),
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
            // Access tokens carry every granted scope, offline_access included (scopes.ts).
            scope: ALL_SCOPES.filter((s) => allowed.size === 0 || allowed.has(s)).join(' '),
            audience: apiAudience,
            accessTokenTTL: TTL.AccessToken,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: 'ES256' } },
          };
        },
      },
    },
    renderError,
  });
  useHashedSecrets(provider.Client);
  // After a rotation, the provider signs with the newest key and publishes the others until they retire.
  ctx.keys.onChange(async () => reloadKeystore.call(provider, { keys: await ctx.keys.privateJwks() }));

  provider.on('grant.revoked', (_kctx: unknown, grantId: string) => ctx.log.info({ grantId }, 'oauth grant revoked'));
  return { provider, issuer, apiAudience };
}

/** The origins clientMetadata gave the client (the provider may camel-case extra properties). */
function clientOrigins(client: Client): string[] {
  const fields = client as unknown as Record<string, unknown>;
  const value = fields[ORIGINS_PROPERTY] ?? fields.atriumAllowedOrigins;
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}
