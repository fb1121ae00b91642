// The baseline of bench/oauth.ts: a bare oidc-provider with its in-memory adapter and its
// development sign-in pages (any login and password are accepted, consent is one click), issuing the
// same kind of token as Atrium (ES256 JWT access tokens for one resource). Run as a child process:
//   BARE_PORT=… BARE_CLIENT_SECRET=… BARE_REDIRECT_URI=… node bench/oauth-bare.ts
import { createServer } from 'node:http';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';

const port = Number(process.env.BARE_PORT);
const secret = process.env.BARE_CLIENT_SECRET!;
const redirectUri = process.env.BARE_REDIRECT_URI!;
const issuer = `http://127.0.0.1:${port}`;
const { privateKey } = await generateKeyPair('ES256', { extractable: true });

const provider = new Provider(issuer, {
  clients: [
    { client_id: 'machine', client_secret: secret, grant_types: ['client_credentials'], response_types: [], redirect_uris: [], scope: 'profile:read', id_token_signed_response_alg: 'ES256' },
    { client_id: 'web', client_secret: secret, grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], redirect_uris: [redirectUri], scope: 'openid profile:read', id_token_signed_response_alg: 'ES256' },
  ],
  jwks: { keys: [{ ...(await exportJWK(privateKey)), kid: 'bench', alg: 'ES256', use: 'sig' }] },
  cookies: { keys: ['bench-cookie-key'] },
  scopes: ['openid', 'offline_access', 'profile:read'],
  pkce: { required: () => true },
  findAccount: async (_ctx: unknown, sub: string) => ({ accountId: sub, claims: () => ({ sub }) }),
  ttl: { AccessToken: 600, ClientCredentials: 600, IdToken: 3600, Interaction: 3600, Session: 3600, Grant: 3600, RefreshToken: 3600 },
  features: {
    clientCredentials: { enabled: true },
    userinfo: { enabled: false },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => issuer,
      useGrantedResource: () => true,
      getResourceServerInfo: () => ({ scope: 'openid profile:read', audience: issuer, accessTokenTTL: 600, accessTokenFormat: 'jwt', jwt: { sign: { alg: 'ES256' } } }),
    },
  },
});

createServer(provider.callback()).listen(port, '127.0.0.1', () => process.stderr.write(`bare oidc-provider on ${issuer}\n`));
