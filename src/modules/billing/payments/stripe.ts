// The Stripe payment provider, through the official `stripe` SDK: Checkout sessions (mode
// `payment` for credits, saving the card for off-session use; mode `subscription` for the plan),
// off-session PaymentIntents for auto-recharge (with the recharge's idempotency key), and webhook
// events verified with the Stripe signature over the raw body. Amounts go to Stripe in cents
// (micro-units rounded up to a cent): a two-decimal currency is assumed.
import { createRequire } from 'node:module';
import type { Config } from '../../../config.ts';
import type { ChargeResult, CheckoutPaid, PaymentProvider } from './providers.ts';

/** Micro-units in the currency's minor unit (cents), rounded up: what a checkout of that amount charges. */
export const cents = (micros: bigint) => Number((micros + 9_999n) / 10_000n);

export function stripeProvider(config: Config): PaymentProvider {
  const { stripeSecretKey, stripeWebhookSecret, stripeApiUrl, currency } = config.billing;
  if (!stripeSecretKey || !stripeWebhookSecret) throw new Error('ATRIUM_PAYMENT_PROVIDER=stripe needs ATRIUM_STRIPE_SECRET_KEY and ATRIUM_STRIPE_WEBHOOK_SECRET');
  const api = new URL(stripeApiUrl);
  // The SDK (about 1 MB of code in 200 files) is loaded only when Stripe is the provider, so a
  // server without it does not keep it resident (docs/benchmarks.md "Memory of the embedded default").
  const Stripe = createRequire(import.meta.url)('stripe') as typeof import('stripe').default;
  const stripe = new Stripe(stripeSecretKey, {
    host: api.hostname,
    port: api.port || (api.protocol === 'https:' ? 443 : 80),
    protocol: api.protocol === 'https:' ? 'https' : 'http',
    maxNetworkRetries: 2,
    httpClient: Stripe.createFetchHttpClient(),
  });
  return {
    name: 'stripe',
    async createCheckout(request) {
      const metadata = { atrium_checkout_id: request.checkoutId, project_id: request.projectId };
      const credits = request.kind === 'credits';
      const session = await stripe.checkout.sessions.create({
        mode: credits ? 'payment' : 'subscription',
        success_url: request.successUrl,
        cancel_url: request.cancelUrl,
        client_reference_id: request.projectId,
        metadata,
        line_items: [{
          quantity: 1,
          price_data: {
            currency: currency.toLowerCase(),
            unit_amount: cents(request.amountMicros),
            product_data: { name: credits ? 'Atrium credits' : 'Atrium monthly subscription' },
            ...(credits ? {} : { recurring: { interval: 'month' as const } }),
          },
        }],
        ...(credits ? { customer_creation: 'always' as const, payment_intent_data: { setup_future_usage: 'off_session' as const, metadata } } : { subscription_data: { metadata } }),
      }, { idempotencyKey: `checkout:${request.checkoutId}` });
      if (!session.url) throw new Error('Stripe returned a checkout session without a URL');
      return { url: session.url, providerRef: session.id };
    },
    async chargeSavedMethod(methodRef, amountMicros, idempotencyKey): Promise<ChargeResult> {
      const [customer, paymentMethod] = methodRef.split('|');
      try {
        const intent = await stripe.paymentIntents.create({
          amount: cents(amountMicros), currency: currency.toLowerCase(), customer: customer!, payment_method: paymentMethod!,
          off_session: true, confirm: true, metadata: { atrium_recharge: idempotencyKey },
        }, { idempotencyKey });
        return intent.status === 'succeeded'
          ? { status: 'succeeded', providerRef: intent.id }
          : { status: 'failed', providerRef: intent.id, error: `The payment is ${intent.status}` };
      } catch (error) {
        if (error instanceof Stripe.errors.StripeCardError || error instanceof Stripe.errors.StripeInvalidRequestError) {
          return { status: 'failed', providerRef: (error.raw as { payment_intent?: { id?: string } }).payment_intent?.id ?? '', error: error.message };
        }
        throw error;
      }
    },
    async parseWebhook(rawBody, signature) {
      // Throws on a missing or wrong signature, or one too old.
      const event = stripe.webhooks.constructEvent(rawBody, signature ?? '', stripeWebhookSecret);
      if (event.type !== 'checkout.session.completed' && event.type !== 'checkout.session.async_payment_succeeded') return [];
      const session = event.data.object;
      const checkoutId = session.metadata?.atrium_checkout_id;
      if (!checkoutId || session.payment_status !== 'paid') return [];
      let card: CheckoutPaid['card'];
      if (typeof session.payment_intent === 'string') {
        const intent = await stripe.paymentIntents.retrieve(session.payment_intent);
        const customer = typeof intent.customer === 'string' ? intent.customer : intent.customer?.id;
        const method = typeof intent.payment_method === 'string' ? intent.payment_method : intent.payment_method?.id;
        if (customer && method) card = { ref: `${customer}|${method}`, label: `Stripe payment method ${method}` };
      }
      return [{ eventId: event.id, checkoutId, sessionId: session.id, amountMinor: session.amount_total ?? -1, currency: session.currency ?? '', card }];
    },
  };
}
