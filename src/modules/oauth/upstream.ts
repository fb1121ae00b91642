// Sign-in through upstream OpenID Connect providers configured by the operator. Atrium acts as a
// relying party (openid-client): authorization code flow with PKCE, state and nonce, kept in an
// encrypted, HttpOnly cookie for the round trip. The upstream account is linked to a local user by
// (provider, subject); a first sign-in links or creates the user by the verified email address.
import * as oidc from 'openid-client';
import type { AppContext } from '../../context.ts';
import type { UpstreamProvider } from '../../config.ts';
import { createUser, findUserByEmail, findUserById, updateUser, type UserRow } from '../users/service.ts';
import { findIdentity, linkIdentity } from './store.ts';

export const UPSTREAM_COOKIE_PATH = '/signin/upstream';
const STATE_TTL_MS = 10 * 60_000;

/** What the browser carries between leaving for the provider and coming back. */
export interface UpstreamState {
  provider: string;
  flow: string;
  state: string;
  nonce: string;
  verifier: string;
  expiresAt: number;
}

export class UpstreamError extends Error {}

export class UpstreamProviders {
  readonly #ctx: AppContext;
  readonly #providers: Map<string, UpstreamProvider>;
  readonly #configs = new Map<string, Promise<oidc.Configuration>>();

  constructor(ctx: AppContext) {
    this.#ctx = ctx;
    this.#providers = new Map(ctx.config.signin.upstream.map((p) => [p.id, p]));
  }

  list(): { id: string; label: string }[] {
    return [...this.#providers.values()].map((p) => ({ id: p.id, label: p.label }));
  }

  has(id: string): boolean {
    return this.#providers.has(id);
  }

  redirectUri(id: string): string {
    return `${this.#ctx.config.publicUrl}${UPSTREAM_COOKIE_PATH}/${encodeURIComponent(id)}/callback`;
  }

  /** Discovery happens on first use and is retried after a failure, so a provider that is down at boot does not stop the service. */
  #configuration(provider: UpstreamProvider): Promise<oidc.Configuration> {
    let config = this.#configs.get(provider.id);
    if (!config) {
      const insecure = provider.issuer.startsWith('http:');
      config = oidc.discovery(new URL(provider.issuer), provider.client_id, undefined, oidc.ClientSecretPost(provider.client_secret), {
        // Plain http only for an http issuer the operator configured (local development, tests).
        ...(insecure ? { execute: [oidc.allowInsecureRequests] } : {}),
        timeout: 10,
      });
      config.catch(() => this.#configs.delete(provider.id));
      this.#configs.set(provider.id, config);
    }
    return config;
  }

  /** The provider's authorization URL and the state to keep in the browser. */
  async start(id: string, flow: string): Promise<{ url: URL; state: UpstreamState }> {
    const provider = this.#providers.get(id);
    if (!provider) throw new UpstreamError('unknown provider');
    const config = await this.#configuration(provider);
    const verifier = oidc.randomPKCECodeVerifier();
    const state: UpstreamState = {
      provider: id,
      flow,
      state: oidc.randomState(),
      nonce: oidc.randomNonce(),
      verifier,
      expiresAt: Date.now() + STATE_TTL_MS,
    };
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: this.redirectUri(id),
      scope: provider.scope ?? 'openid email profile',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state: state.state,
      nonce: state.nonce,
    });
    return { url, state };
  }

  sealState(state: UpstreamState): string {
    return this.#ctx.secrets.encrypt(JSON.stringify(state));
  }

  openState(sealed: string | undefined, id: string): UpstreamState | undefined {
    if (!sealed) return undefined;
    try {
      const state = JSON.parse(this.#ctx.secrets.decrypt(sealed)) as UpstreamState;
      return state.provider === id && state.expiresAt > Date.now() ? state : undefined;
    } catch {
      return undefined;
    }
  }

  /** Redeems the callback and returns the local user it signs in. */
  async finish(state: UpstreamState, callbackUrl: URL): Promise<UserRow> {
    const provider = this.#providers.get(state.provider);
    if (!provider) throw new UpstreamError('unknown provider');
    const config = await this.#configuration(provider);
    const tokens = await oidc.authorizationCodeGrant(config, callbackUrl, {
      pkceCodeVerifier: state.verifier,
      expectedState: state.state,
      expectedNonce: state.nonce,
      idTokenExpected: true,
    });
    const idClaims = tokens.claims();
    if (!idClaims) throw new UpstreamError('the provider returned no ID token');
    let claims: Record<string, unknown> = { ...idClaims };
    if (typeof claims.email !== 'string') {
      claims = { ...(await oidc.fetchUserInfo(config, tokens.access_token, idClaims.sub)), ...claims };
    }
    return this.#localUser(provider.id, idClaims.sub, claims);
  }

  async #localUser(providerId: string, subject: string, claims: Record<string, unknown>): Promise<UserRow> {
    const db = this.#ctx.db;
    const linked = await findIdentity(db, providerId, subject);
    if (linked) {
      const user = await findUserById(db, linked.userId);
      if (user) return user.emailVerifiedAt ? user : (await updateUser(db, user.id, { emailVerifiedAt: new Date() }))!;
    }
    const email = typeof claims.email === 'string' ? claims.email.trim() : '';
    // Linking by address is only safe when the provider vouches for it.
    if (!email || claims.email_verified !== true) {
      throw new UpstreamError('the provider did not share a verified email address');
    }
    let user = await findUserByEmail(db, email);
    if (user && !user.emailVerifiedAt) {
      // An unconfirmed account with this address may have been made by someone else: the password
      // it holds is dropped, and the mailbox owner (proved by the provider) takes it over.
      user = await updateUser(db, user.id, { emailVerifiedAt: new Date(), passwordHash: null });
    }
    if (!user) {
      try {
        user = await createUser(db, {
          email,
          firstName: typeof claims.given_name === 'string' ? claims.given_name.slice(0, 200) : '',
          lastName: typeof claims.family_name === 'string' ? claims.family_name.slice(0, 200) : '',
          emailVerified: true,
        });
      } catch {
        user = await findUserByEmail(db, email);
      }
    }
    if (!user) throw new UpstreamError('could not create the account');
    await linkIdentity(db, { provider: providerId, subject, userId: user.id, email });
    return user;
  }
}
