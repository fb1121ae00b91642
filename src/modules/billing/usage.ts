// Pricing LLM proxy calls and room sessions: a consumer of `llm.call.completed` (and, when a price
// covers session minutes, of `room.ended`) that, in the statement writing the event, queues one
// pricing job per call or session (keyed by the event, so it is queued once), due
// ATRIUM_BILLING_PRICING_DELAY_MS later so that a settlement prices many at once; the job posts the
// usage debit, rollup lines and reservation release in the transaction that settles it, and the
// ledger's idempotency key (`usage:<request id>`, `usage:session:<session id>`) makes a replay
// change nothing.
import { sql } from 'drizzle-orm';
import type { AppContext } from '../../context.ts';
import type { EventConsumer } from '../../platform/events/catalogue.ts';
import { recordTogether, type JobHandler, type RecordWriter } from '../../platform/jobs/worker.ts';
import type { Schedule } from '../../platform/jobs/scheduler.ts';
import { LLM_CALL_EVENT } from '../llm-proxy/schema.ts';
import { ROOM_ENDED_EVENT } from '../sessions/service.ts';
import { pricesSessions } from './prices.ts';
import { billingState, chargeRecharge, priceSessions, priceUsages, RECHARGE_TOPIC, releaseStaleReservations, type CallUsage, type ProjectCall, type ProjectSession } from './service.ts';

export const PRICE_TOPIC = 'billing.price';
export const SESSION_PRICE_TOPIC = 'billing.price-session';

/** What a pricing job carries of its call's event: the fields pricing reads, and no more. */
const PRICED_FIELDS = Object.keys({
  request_id: true, provider: true, endpoint: true, model: true, usage_source: true, usage: true, user: true, annotations: true, started_at: true,
} satisfies Record<keyof CallUsage, true>);
const pricedCall = sql.raw(`jsonb_build_object(${PRICED_FIELDS.map((field) => `'${field}', event.data->'${field}'`).join(', ')})`);

export function usageFanout(ctx: AppContext): EventConsumer {
  // Sessions are priced only when the price list has a price for their minutes: no job otherwise.
  const sessions = pricesSessions(billingState(ctx).prices);
  const gatherMs = ctx.config.billing.pricingDelayMs;
  return {
    name: 'billing',
    fanout: (event) => {
      if (event.definition.type === LLM_CALL_EVENT) {
        return {
          wants: sql`true`,
          jobs: sql`select ${PRICE_TOPIC}::text as topic, event.id::text as key,
            jsonb_build_object('project_id', event.project_id, 'call', ${pricedCall}) as payload from event`,
          gatherMs,
        };
      }
      if (sessions && event.definition.type === ROOM_ENDED_EVENT) {
        return {
          wants: sql`true`,
          jobs: sql`select ${SESSION_PRICE_TOPIC}::text as topic, event.id::text as key,
            jsonb_build_object('project_id', event.project_id, 'session_id', event.data->>'session_id') as payload from event`,
          gatherMs,
        };
      }
      return { wants: sql`false` };
    },
  };
}

export function priceHandler(ctx: AppContext): JobHandler {
  // The jobs settled together are priced together: a few statements per settlement, not per call.
  const pricing: RecordWriter<ProjectCall> = { write: async (tx, calls) => { await priceUsages(ctx, tx, calls); } };
  return {
    topic: PRICE_TOPIC,
    async run(job) {
      return { recordTogether: recordTogether(pricing, { projectId: String(job.payload.project_id), call: job.payload.call as CallUsage }) };
    },
  };
}

export function sessionPriceHandler(ctx: AppContext): JobHandler {
  const pricing: RecordWriter<ProjectSession> = { write: async (tx, sessions) => { await priceSessions(ctx, tx, sessions); } };
  return {
    topic: SESSION_PRICE_TOPIC,
    async run(job) {
      return { recordTogether: recordTogether(pricing, { projectId: String(job.payload.project_id), sessionId: String(job.payload.session_id) }) };
    },
  };
}

export function rechargeHandler(ctx: AppContext): JobHandler {
  return {
    topic: RECHARGE_TOPIC,
    async run(job, { db }) {
      const record = await chargeRecharge(ctx, db, String(job.payload.project_id), String(job.payload.recharge_id));
      return record ? { record } : {};
    },
  };
}

export function reservationSweep(ctx: AppContext): Schedule {
  return {
    name: 'billing.release-stale-reservations',
    cron: '*/10 * * * *',
    async run() {
      const released = await releaseStaleReservations(ctx);
      if (released > 0) ctx.log.warn({ released }, 'billing: released reservations of calls whose usage record never came');
    },
  };
}
