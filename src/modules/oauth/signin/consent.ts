// The consent form: allowing grants the scopes and claims the flow is missing; denying sends the
// client access_denied.
import type { Api } from '../../../module.ts';
import { Html, PAGE_ROUTE } from '../respond.ts';
import { finish, pipeline, type Signin, type SigninKit } from './pipeline.ts';
import { ConsentForm, FlowParams, PAGE } from './schemas.ts';
import { checkCsrf, loadFlow, requireConfirmedAccount, requireConsent } from './steps.ts';
import { recordSignin } from './audit.ts';

function denyUnlessAllowed(s: Signin) {
  if (s.fields.decision !== 'allow') return finish(s, { error: 'access_denied', error_description: 'The user denied the request' }, false);
}

async function grantConsent(s: Signin) {
  const { provider } = s.kit;
  const flow = s.flow!;
  const grant = (flow.grantId ? await provider.Grant.find(flow.grantId) : undefined) ?? new provider.Grant({ accountId: s.user!.id, clientId: flow.params.client_id! });
  const { missingOIDCScope, missingOIDCClaims, missingResourceScopes } = flow.prompt.details;
  if (missingOIDCScope) grant.addOIDCScope(missingOIDCScope.join(' '));
  if (missingOIDCClaims) grant.addOIDCClaims(missingOIDCClaims);
  for (const [indicator, scopes] of Object.entries(missingResourceScopes ?? {})) grant.addResourceScope(indicator, scopes.join(' '));
  const grantId = await grant.save();
  recordSignin(s, 'consent.grant');
  return finish(s, { consent: { grantId } });
}

export function consentRoutes(route: Api, kit: SigninKit): void {
  route.post('/interaction/:uid/consent', {
    config: PAGE_ROUTE,
    schema: { ...PAGE, summary: 'Allow or deny an application', params: FlowParams, body: ConsentForm, response: { '4xx': Html } },
  }, pipeline(kit, [checkCsrf, loadFlow, requireConsent, requireConfirmedAccount, denyUnlessAllowed, grantConsent]));
}
