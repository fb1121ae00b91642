// The Stripe payment provider on both engines, with the official `stripe` SDK talking to a fake
// Stripe API on loopback (ATRIUM_STRIPE_API_URL; no network) and webhook events signed with the
// SDK's own test-header helper: Checkout sessions as Stripe expects them, `checkout.session.completed`
// crediting once however often (and under however many event ids) it arrives, and only when its
// session, amount and currency are the checkout's; a bad signature refused, a subscription checkout
// starting the subscription with the month's credits once, auto-recharge charging the saved card
// off-session with its idempotency key — or recording the decline —, and a checkout the local
// provider opened before the switch to Stripe no longer payable.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, afterEach, before, test } from 'node:test';
import Stripe from 'stripe';
import { sql } from 'drizzle-orm';
import { rowsOf } from '../../src/platform/db/rows.ts';
import { verifyLedger } from '../../src/modules/billing/service.ts';
import { call, createTenant, forEachEngine, startTestService, type Tenant, type TestService } from '../support/service.ts';
import { eventually } from '../support/webhooks.ts';

const WEBHOOK_SECRET = 'whsec_test_secret';

interface StripeRequest { method: string; path: string; form: URLSearchParams; idempotencyKey: string | undefined }

/** A fake of the few Stripe API calls the provider makes. */
async function startFakeStripe() {
  const requests: StripeRequest[] = [];
  let n = 0;
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (c: string) => { body += c; }).on('end', () => {
      const path = req.url!.split('?')[0]!;
      const form = new URLSearchParams(body);
      requests.push({ method: req.method!, path, form, idempotencyKey: req.headers['idempotency-key'] as string | undefined });
      const send = (status: number, json: unknown) => res.writeHead(status, { 'content-type': 'application/json', 'request-id': `req_${n}` }).end(JSON.stringify(json));
      n += 1;
      if (req.method === 'POST' && path === '/v1/checkout/sessions') {
        return send(200, { id: `cs_test_${n}`, object: 'checkout.session', mode: form.get('mode'), status: 'open', url: `https://checkout.stripe.com/c/pay/cs_test_${n}` });
      }
      if (req.method === 'GET' && path.startsWith('/v1/payment_intents/')) {
        const id = path.split('/').at(-1)!;
        return send(200, { id, object: 'payment_intent', status: 'succeeded', customer: 'cus_1', payment_method: id === 'pi_declining' ? 'pm_card_chargeDeclined' : 'pm_card_visa' });
      }
      if (req.method === 'POST' && path === '/v1/payment_intents') {
        if (form.get('payment_method') === 'pm_card_chargeDeclined') {
          return send(402, { error: { type: 'card_error', code: 'card_declined', message: 'Your card was declined.', payment_intent: { id: `pi_declined_${n}` } } });
        }
        return send(200, { id: `pi_recharge_${n}`, object: 'payment_intent', status: 'succeeded', amount: Number(form.get('amount')) });
      }
      return send(404, { error: { type: 'invalid_request_error', message: `Unrecognized request URL (${req.method}: ${path})` } });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests, close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }) };
}

forEachEngine('billing with Stripe', (engine) => {
  let fake: Awaited<ReturnType<typeof startFakeStripe>>;
  let service: TestService;
  const stripe = new Stripe('sk_test_unused');

  before(async () => {
    fake = await startFakeStripe();
    service = await startTestService(engine, {
      ATRIUM_PAYMENT_PROVIDER: 'stripe',
      ATRIUM_STRIPE_SECRET_KEY: 'sk_test_atrium',
      ATRIUM_STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
      ATRIUM_STRIPE_API_URL: fake.url,
    });
  });
  after(async () => {
    await service?.stop();
    await fake?.close();
  });
  afterEach(async () => assert.deepEqual([...await verifyLedger(service.ctx.db)], []));

  const base = (t: Tenant) => `/accounts/projects/${t.projectId}`;
  const balanceOf = async (t: Tenant) => (await call(service, 'GET', `${base(t)}/balance`, { token: t.apiKey })).body;
  const deliver = (event: unknown, secret = WEBHOOK_SECRET) => {
    const payload = JSON.stringify(event);
    return call(service, 'POST', '/billing/stripe/webhook', { body: payload, headers: { 'content-type': 'application/json', 'stripe-signature': stripe.webhooks.generateTestHeaderString({ payload, secret }) } });
  };
  interface Checkout { id: string; session: string; cents: number }
  /** A signed-off `checkout.session.completed` of a checkout, as Stripe sends it (its session, amount and currency; `paid` overrides). */
  const completed = (eventId: string, checkout: Checkout, paymentIntent: string, paid: Record<string, unknown> = {}) => ({
    id: eventId, object: 'event', type: 'checkout.session.completed', api_version: '2025-01-01', created: Math.floor(Date.now() / 1000),
    data: {
      object: {
        id: checkout.session, object: 'checkout.session', mode: 'payment', payment_status: 'paid', status: 'complete', amount_total: checkout.cents, currency: 'usd',
        payment_intent: paymentIntent, metadata: { atrium_checkout_id: checkout.id }, ...paid,
      },
    },
  });
  async function buyCredits(t: Tenant, quantity: number): Promise<Checkout> {
    const { status, body } = await call(service, 'POST', `${base(t)}/credits`, { token: t.apiKey, json: { success_url: 'https://app.example/ok', cancel_url: 'https://app.example/no', quantity } });
    assert.equal(status, 200);
    assert.match(body.checkout_url, /^https:\/\/checkout\.stripe\.com\/c\/pay\/cs_test_/);
    const sent = fake.requests.findLast((r) => r.path === '/v1/checkout/sessions')!;
    return { id: sent.form.get('metadata[atrium_checkout_id]')!, session: body.checkout_url.split('/').at(-1), cents: quantity * 100 };
  }

  test('a credits checkout is a Stripe Checkout session; its completion credits once, however often it arrives', async () => {
    const t = await createTenant(service, 'stripe');
    const checkout = await buyCredits(t, 5);
    const checkoutId = checkout.id;
    const sent = fake.requests.findLast((r) => r.path === '/v1/checkout/sessions')!;
    assert.equal(sent.form.get('mode'), 'payment');
    assert.equal(sent.form.get('line_items[0][price_data][unit_amount]'), '500');
    assert.equal(sent.form.get('line_items[0][price_data][currency]'), 'usd');
    assert.equal(sent.form.get('payment_intent_data[setup_future_usage]'), 'off_session');
    assert.equal(sent.form.get('success_url'), 'https://app.example/ok');
    assert.equal(sent.idempotencyKey, `checkout:${checkoutId}`);

    const bad = await deliver(completed('evt_bad', checkout, 'pi_1'), 'whsec_wrong');
    assert.equal(bad.status, 400);
    assert.match(bad.body.error.message, /signature/);
    assert.equal((await balanceOf(t)).balance, 0);

    const event = completed('evt_1', checkout, 'pi_1');
    const answers = await Promise.all([deliver(event), deliver(event), deliver(event)]);
    for (const a of answers) assert.equal(a.status, 200, JSON.stringify(a.body));
    // The same checkout under another event id (e.g. async_payment_succeeded after completed).
    assert.equal((await deliver({ ...completed('evt_2', checkout, 'pi_1'), type: 'checkout.session.async_payment_succeeded' })).status, 200);
    assert.equal((await balanceOf(t)).balance, 5);
    const { body } = await call(service, 'GET', `${base(t)}/subscription`, { token: t.apiKey });
    assert.equal(body.payment_method, 'Stripe payment method pm_card_visa');

    // Auto-recharge charges the saved card off-session, once, with the recharge's idempotency key.
    await call(service, 'POST', `${base(t)}/recharge`, { token: t.apiKey, json: { enabled: true, amount: 10, threshold: 8 } });
    await eventually(async () => (await balanceOf(t)).balance === 15);
    const charge = fake.requests.findLast((r) => r.path === '/v1/payment_intents' && r.method === 'POST')!;
    assert.deepEqual([charge.form.get('amount'), charge.form.get('customer'), charge.form.get('payment_method'), charge.form.get('off_session'), charge.form.get('confirm')], ['1000', 'cus_1', 'pm_card_visa', 'true', 'true']);
    assert.match(charge.idempotencyKey!, /^recharge:[0-9a-f-]{36}$/);
  });

  test('a subscription checkout is a recurring Stripe Checkout session; its completion starts the subscription and grants the month\'s credits once', async () => {
    const t = await createTenant(service, 'stripe-subscription');
    const { status, body } = await call(service, 'POST', `${base(t)}/subscription`, { token: t.apiKey, json: { success_url: 'https://app.example/ok', cancel_url: 'https://app.example/no' } });
    assert.equal(status, 200, JSON.stringify(body));
    assert.match(body.checkout_url, /^https:\/\/checkout\.stripe\.com\/c\/pay\/cs_test_/);
    const sent = fake.requests.findLast((r) => r.path === '/v1/checkout/sessions')!;
    const checkoutId = sent.form.get('metadata[atrium_checkout_id]')!;
    const session = body.checkout_url.split('/').at(-1) as string;
    assert.deepEqual([sent.form.get('mode'), sent.form.get('line_items[0][price_data][recurring][interval]'), sent.form.get('line_items[0][price_data][unit_amount]'), sent.form.get('subscription_data[metadata][atrium_checkout_id]')],
      ['subscription', 'month', '2000', checkoutId], 'ATRIUM_BILLING_SUBSCRIPTION_CREDITS (20) a month');
    assert.equal(sent.idempotencyKey, `checkout:${checkoutId}`);
    assert.equal((await call(service, 'GET', `${base(t)}/subscription`, { token: t.apiKey })).body.subscription, null, 'nothing before it is paid');

    // A subscription checkout has no payment intent of its own; the event arrives twice.
    const event = completed('evt_sub', { id: checkoutId, session, cents: 2000 }, 'unused', { mode: 'subscription', payment_intent: null, subscription: 'sub_1' });
    for (const answer of await Promise.all([deliver(event), deliver(event)])) assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal((await balanceOf(t)).balance, 20);
    const subscription = (await call(service, 'GET', `${base(t)}/subscription`, { token: t.apiKey })).body.subscription;
    assert.deepEqual([subscription.plan, subscription.status, subscription.monthly_credits, subscription.provider], ['monthly', 'active', 20, 'stripe']);
    const grants = (await call(service, 'GET', `${base(t)}/transactions`, { token: t.apiKey })).body.transactions.filter((e: { type: string }) => e.type === 'subscription_grant');
    assert.equal(grants.length, 1);
  });

  test('a declined off-session charge is recorded as a failure and credits nothing', async () => {
    const t = await createTenant(service, 'stripe-declined');
    const checkout = await buyCredits(t, 1);
    assert.equal((await deliver(completed('evt_declining', checkout, 'pi_declining'))).status, 200);
    assert.equal((await balanceOf(t)).balance, 1);
    await call(service, 'POST', `${base(t)}/recharge`, { token: t.apiKey, json: { enabled: true, amount: 10, threshold: 5 } });
    await eventually(async () => fake.requests.some((r) => r.path === '/v1/payment_intents' && r.form.get('payment_method') === 'pm_card_chargeDeclined'));
    await new Promise((resolve) => setTimeout(resolve, 300));
    const balance = await balanceOf(t);
    assert.equal(balance.balance, 1);
    assert.equal(balance.auto_recharged_this_month, 0);
    const attempts = rowsOf<{ status: string; error: string }>(await service.ctx.db.execute(sql`select status, error from billing_recharges where project_id = ${t.projectId}::uuid`));
    assert.deepEqual([...attempts], [{ status: 'failed', error: 'Your card was declined.' }]);
  });

  test('an event of another type, or for no Atrium checkout, changes nothing', async () => {
    const other = await deliver({ id: 'evt_other', object: 'event', type: 'customer.created', data: { object: { id: 'cus_2' } } });
    assert.deepEqual([other.status, other.body.processed], [200, 0]);
    const foreign = await deliver({ ...completed('evt_foreign', { id: 'not-ours', session: 'cs_x', cents: 100 }, 'pi_1'), data: { object: { id: 'cs_x', payment_status: 'paid', metadata: {} } } });
    assert.deepEqual([foreign.status, foreign.body.processed], [200, 0]);
  });

  test('a paid event is credited only when its session, amount and currency are its checkout\'s', async () => {
    const t = await createTenant(service, 'stripe-mismatch');
    const checkout = await buyCredits(t, 3);
    const other = await buyCredits(t, 1);
    // Signed events that name the checkout but claim another payment: each is answered (Stripe would
    // retry anything else) and credits nothing.
    const claims: [string, Record<string, unknown>][] = [
      ['evt_cent', { amount_total: 1 }],
      ['evt_eur', { currency: 'eur' }],
      ['evt_other_session', { id: other.session }],
      ['evt_no_amount', { amount_total: null }],
    ];
    for (const [eventId, paid] of claims) {
      const answer = await deliver(completed(eventId, checkout, 'pi_1', paid));
      assert.deepEqual([answer.status, answer.body.processed], [200, 0], eventId);
    }
    assert.equal((await balanceOf(t)).balance, 0);
    // The true event credits once; the same payment under an id seen before with a false claim, nothing more.
    assert.deepEqual((await deliver(completed('evt_true', checkout, 'pi_1'))).body.processed, 1);
    assert.deepEqual((await deliver(completed('evt_cent', checkout, 'pi_1'))).body.processed, 0);
    assert.equal((await balanceOf(t)).balance, 3);
  });

  test('a checkout the local provider opened before the switch to Stripe cannot be paid', async () => {
    const t = await createTenant(service, 'stripe-switched');
    // The row a server on the local provider left: an open checkout for 100,000 credits.
    const id = randomUUID();
    await service.ctx.db.execute(sql`
      insert into billing_checkouts (id, project_id, kind, amount_micros, quantity, success_url, cancel_url, provider, provider_ref)
      values (${id}::uuid, ${t.projectId}::uuid, 'credits', 100000000000, 100000, 'https://app.example/ok', 'https://app.example/no', 'local', ${`local_cs_${id}`})`);
    const page = `${service.url}/billing/checkout/${id}`;
    assert.equal((await fetch(page)).status, 404);
    const paid = await fetch(page, { method: 'POST', redirect: 'manual', body: new URLSearchParams({ action: 'confirm', card: '4242424242424242' }) });
    assert.equal(paid.status, 404);
    assert.equal((await balanceOf(t)).balance, 0);
  });
});
