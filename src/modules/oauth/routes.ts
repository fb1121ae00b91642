// The authorization server's HTTP surface, assembled once per app: the protocol (oidc-provider
// under /oauth and discovery, Atrium's userinfo), the sign-in and consent pages, and the
// development mail outbox. The parts they share are built here.
import type { AppContext } from '../../context.ts';
import type { Api } from '../../module.ts';
import { createSecondFactors } from '../users/service.ts';
import { createSigninService } from './accounts.ts';
import { Csrf } from './csrf.ts';
import { devMailRoutes } from './dev-mail.ts';
import { deriveSigninKeys } from './keys.ts';
import { RateCounters } from '../../platform/limits/counters.ts';
import { AttemptLimiter } from './limits.ts';
import { mountProtocol } from './protocol/mount.ts';
import { createProvider } from './provider.ts';
import { signinRoutes } from './signin/index.ts';
import { UpstreamProviders } from './upstream.ts';

export async function oauthRoutes(app: Api, ctx: AppContext): Promise<void> {
  const keys = deriveSigninKeys(ctx.config);
  const { provider, issuer } = await createProvider(ctx, keys);
  const signin = createSigninService(ctx, keys.codes);

  app.addHook('onClose', () => signin.drain());

  await mountProtocol(app, ctx, provider);
  await signinRoutes(app, {
    ctx,
    provider,
    issuer,
    signin,
    limiter: new AttemptLimiter(new RateCounters(ctx.db), ctx.config.signin.limits),
    csrf: new Csrf(keys.csrf, issuer),
    upstream: new UpstreamProviders(ctx),
    factors: createSecondFactors(ctx),
  });
  devMailRoutes(app, ctx, issuer);
}
