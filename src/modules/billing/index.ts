// Billing and usage: a prepaid wallet per project with an append-only ledger, prices for LLM proxy
// calls and room-session minutes, admission against the balance, auto-recharge, checkouts (local
// test provider, Stripe), and usage reports from hourly and daily rollups. docs/billing.md.
import type { Module } from '../../module.ts';
import { handles } from '../../platform/jobs/types.ts';
import { priceJob, rechargeJob, sessionPriceJob } from './jobs.ts';
import { rechargeHandler } from './payments/service.ts';
import { priceHandler, reservationSweep, sessionPriceHandler, usageConsumers } from './pricing/consumers.ts';
import { admitCall } from './pricing/service.ts';
import { billingRoutes } from './routes.ts';

export const billingModule: Module = {
  name: 'billing',
  routes: billingRoutes,
  admission: (ctx) => ({ admit: (call) => admitCall(ctx, call) }),
  jobs: [handles(priceJob, priceHandler), handles(sessionPriceJob, sessionPriceHandler), handles(rechargeJob, rechargeHandler)],
  schedules: (ctx) => [reservationSweep(ctx)],
  eventConsumers: usageConsumers,
};
