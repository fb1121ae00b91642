// Billing and usage: a prepaid wallet per project with an append-only ledger, prices for LLM proxy
// calls and room-session minutes, admission against the balance, auto-recharge, checkouts (local
// test provider, Stripe), and usage reports from an hourly rollup. docs/billing.md.
import type { Module } from '../../module.ts';
import { billingRoutes } from './routes.ts';
import { admitCall } from './service.ts';
import { handles } from '../../platform/jobs/types.ts';
import { priceJob, rechargeJob, sessionPriceJob } from './jobs.ts';
import { priceHandler, rechargeHandler, reservationSweep, sessionPriceHandler, usageConsumers } from './usage.ts';

export const billingModule: Module = {
  name: 'billing',
  routes: billingRoutes,
  admission: (ctx) => ({ admit: (call) => admitCall(ctx, call) }),
  jobs: [handles(priceJob, priceHandler), handles(sessionPriceJob, sessionPriceHandler), handles(rechargeJob, rechargeHandler)],
  schedules: (ctx) => [reservationSweep(ctx)],
  eventConsumers: usageConsumers,
};
