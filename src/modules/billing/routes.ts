// Billing's HTTP surface: pricing (public), balance, transactions, auto-recharge, checkouts for
// credits and the subscription, the usage report, and the local provider's checkout page.
import formbody from '@fastify/formbody';
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import type { AppContext } from '../../context.ts';
import { notFound } from '../../platform/http/errors.ts';
import { pageOf } from '../../platform/http/lists.ts';
import type { Api } from '../../module.ts';
import { ProjectParams } from '../../platform/http/schemas.ts';
import { checkoutPage, pageCsp } from './payments/page.ts';
import * as payments from './payments/service.ts';
import { pricingView } from './pricing/prices.ts';
import { priceBook } from './pricing/service.ts';
import { usageReport } from './reports/service.ts';
import * as schema from './schema.ts';
import * as service from './service.ts';

const tags = ['Billing and usage'];
const Html = Type.String({ description: 'An HTML page' });
const Redirect = Type.Null({ description: 'Redirect to the success or cancel URL' });

export async function billingRoutes(app: Api, ctx: AppContext): Promise<void> {
  // Fails the start on a bad price file, or a payment provider without its keys.
  const book = priceBook(ctx);
  payments.paymentProvider(ctx);
  const stopWatching = book.watch();
  app.addHook('onClose', async () => stopWatching());
  await app.register(formbody, { bodyLimit: 4096 });

  app.get('/pricing', {
    config: { auth: { permission: 'public' } },
    schema: { tags, summary: 'Prices per provider, model and usage type (per million units), and the proxy surcharge', response: { 200: schema.Pricing } },
  }, async () => pricingView(book.list));

  app.get('/accounts/projects/:project_id/balance', {
    config: { auth: { permission: 'member' } },
    schema: { tags, summary: 'The project\'s balance and auto-recharge settings', params: ProjectParams, response: { 200: schema.Balance } },
  }, async (request) => service.balanceView(ctx, request.params.project_id));

  app.get('/accounts/projects/:project_id/transactions', {
    config: { auth: { permission: 'usage_reporter' } },
    schema: { tags, summary: 'Ledger entries, newest first', params: ProjectParams, querystring: schema.TransactionQuery, response: { 200: schema.TransactionList } },
  }, async (request) => service.listTransactions(ctx, request.params.project_id, pageOf(request.query)));

  app.post('/accounts/projects/:project_id/recharge', {
    config: { auth: { permission: 'billing_manager' } },
    schema: { tags, summary: 'Set auto-recharge: enabled, amount, threshold, monthly_budget', params: ProjectParams, body: schema.RechargeBody, response: { 200: schema.Balance } },
  }, async (request) => ctx.db.transaction(async (tx) => {
    await payments.setAutoRecharge(ctx, tx, request.params.project_id, request.body);
    return service.balanceView(ctx, request.params.project_id, tx);
  }));

  app.post('/accounts/projects/:project_id/credits', {
    config: { auth: { permission: 'billing_manager' } },
    schema: { tags, summary: 'Start a checkout for credits', params: ProjectParams, body: schema.CreditsBody, response: { 200: schema.CheckoutUrl } },
  }, async (request) => payments.startCheckout(ctx, request.params.project_id, 'credits', request.body));

  app.post('/accounts/projects/:project_id/subscription', {
    config: { auth: { permission: 'billing_manager' } },
    schema: { tags, summary: 'Start a checkout for the monthly subscription', params: ProjectParams, body: schema.SubscriptionBody, response: { 200: schema.CheckoutUrl } },
  }, async (request) => payments.startCheckout(ctx, request.params.project_id, 'subscription', request.body));

  app.get('/accounts/projects/:project_id/subscription', {
    config: { auth: { permission: 'usage_reporter' } },
    schema: { tags, summary: 'The project\'s subscription and saved payment method', params: ProjectParams, response: { 200: schema.Subscription } },
  }, async (request) => payments.subscriptionView(ctx, request.params.project_id));

  app.get('/accounts/projects/:project_id/usage', {
    config: { auth: { permission: 'usage_reporter' } },
    schema: { tags, summary: 'Usage and cost per time bucket, grouped and filtered', params: ProjectParams, querystring: schema.UsageQuery, response: { 200: schema.UsageReport } },
  }, async (request) => usageReport(ctx, request.params.project_id, request.query));

  // Stripe's webhook: the signature is over the raw body, so this route keeps it as bytes.
  await app.register(async (scope) => {
    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit: 1024 * 1024 }, (_request, body, done) => done(null, body));
    scope.post('/billing/stripe/webhook', {
      config: { auth: { permission: 'public' } },
      schema: {
        tags, summary: 'Stripe webhook events (verified with the Stripe-Signature header)',
        headers: Type.Object({ 'stripe-signature': Type.Optional(Type.String({ maxLength: 2000 })) }),
        body: Type.Unsafe<Buffer>({ description: 'A Stripe event, as Stripe sent it' }),
        response: { 200: Type.Object({ received: Type.Boolean(), processed: Type.Integer() }) },
      },
    }, async (request) => ({
      received: true,
      processed: await payments.handleWebhook(ctx, 'stripe', request.body as Buffer, request.headers['stripe-signature'] as string | undefined),
    }));
  });

  // The local payment provider's checkout page (its id is the secret: it is only in the checkout URL),
  // while the local provider is this server's: a checkout it opened is void once the operator
  // switches to another.
  app.get('/billing/checkout/:checkout_id', {
    config: { auth: { permission: 'public' } },
    schema: { tags, summary: 'The local test checkout page', params: schema.CheckoutParams, response: { 200: Html } },
  }, async (request, reply) => {
    const checkout = await payments.localCheckout(ctx, request.params.checkout_id);
    if (!checkout) throw notFound('Checkout');
    return sendPage(reply, 200, checkoutPage(checkout, ctx.config.billing.currency), pageCsp(checkout));
  });

  app.post('/billing/checkout/:checkout_id', {
    config: { auth: { permission: 'public' } },
    schema: { tags, summary: 'Confirm or cancel a local test checkout', params: schema.CheckoutParams, body: schema.CheckoutForm, response: { 303: Redirect, 402: Html } },
  }, async (request, reply) => {
    const found = await payments.localCheckout(ctx, request.params.checkout_id);
    if (!found) throw notFound('Checkout');
    if (request.body.action === 'cancel') {
      const checkout = await payments.cancelCheckout(ctx.db, found);
      return checkout!.status === 'completed' ? reply.redirect(found.successUrl, 303) : reply.redirect(found.cancelUrl, 303);
    }
    const { checkout, declined } = await payments.confirmLocalCheckout(ctx, found, request.body.card ?? '');
    if (declined) return sendPage(reply, 402, checkoutPage(checkout!, ctx.config.billing.currency, declined), pageCsp(found));
    return checkout?.status === 'completed' ? reply.redirect(found.successUrl, 303) : reply.redirect(found.cancelUrl, 303);
  });
}

function sendPage(reply: FastifyReply, status: number, html: string, csp: string): FastifyReply {
  return reply.status(status).header('cache-control', 'no-store').header('content-security-policy', csp)
    .header('x-frame-options', 'DENY').header('referrer-policy', 'no-referrer').type('text/html; charset=utf-8').send(html);
}
