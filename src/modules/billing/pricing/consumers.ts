// Pricing LLM proxy calls and room sessions as background work: consumers of `llm.call.completed` (and, when a price
// covers session minutes, of `room.ended`) that, in the statement writing the event, queue one
// pricing job per call or session (keyed by the event, so it is queued once), due
// ATRIUM_BILLING_PRICING_DELAY_MS later so that a settlement prices many at once; the job posts the
// usage debit, rollup lines and reservation release in the transaction that settles it, and the
// ledger's idempotency key (`usage:<request id>`, `usage:session:<session id>`) makes a replay
// change nothing.
import { sql } from 'drizzle-orm';
import type { AppContext } from '../../../context.ts';
import { defineConsumer, type EventConsumer } from '../../../platform/events/catalogue.ts';
import type { RunnerOf } from '../../../platform/jobs/types.ts';
import { recordTogether, type RecordWriter } from '../../../platform/jobs/worker.ts';
import type { Schedule } from '../../../platform/jobs/scheduler.ts';
import { llmCallCompleted } from '../../llm-proxy/events.ts';
import { roomEnded } from '../../sessions/events.ts';
import { PricedCall, priceJob, sessionPriceJob } from '../jobs.ts';
import * as ledger from '../ledger/service.ts';
import { pricesSessions } from './prices.ts';
import { priceBook, priceCalls, priceSessions, type ProjectCall, type ProjectSession } from './service.ts';

const pricedCall = sql.raw(`jsonb_build_object(${Object.keys(PricedCall.properties).map((field) => `'${field}', event.data->'${field}'`).join(', ')})`);

export function usageConsumers(ctx: AppContext): EventConsumer[] {
  const gatherMs = ctx.config.billing.pricingDelayMs;
  const calls = defineConsumer({
    name: 'billing_calls',
    takes: [llmCallCompleted],
    queues: priceJob,
    gatherMs,
    fanout: () => ({ jobs: { from: sql`event`, key: sql`event.id`, payload: { project_id: sql`event.project_id`, call: pricedCall } } }),
  });
  // Sessions are priced only when the price list at start has a price for their minutes: no job
  // otherwise (the statement that ends a session is built once).
  const pricesMinutes = pricesSessions(priceBook(ctx).list);
  const sessions = defineConsumer({
    name: 'billing_sessions',
    takes: [roomEnded],
    queues: sessionPriceJob,
    gatherMs,
    fanout: () => ({
      wants: sql.raw(String(pricesMinutes)),
      jobs: { from: sql`event where ${sql.raw(String(pricesMinutes))}`, key: sql`event.id`, payload: { project_id: sql`event.project_id`, session_id: sql`event.data->>'session_id'` } },
    }),
  });
  return [calls, sessions];
}

export function priceHandler(ctx: AppContext): RunnerOf<typeof priceJob> {
  // The jobs settled together are priced together: a few statements per settlement, not per call.
  const pricing: RecordWriter<ProjectCall> = { write: async (tx, calls) => { await priceCalls(ctx, tx, calls); } };
  return {
    async run({ payload }) {
      return { recordTogether: recordTogether(pricing, { projectId: payload.project_id, call: payload.call }) };
    },
  };
}

export function sessionPriceHandler(ctx: AppContext): RunnerOf<typeof sessionPriceJob> {
  const pricing: RecordWriter<ProjectSession> = { write: async (tx, sessions) => { await priceSessions(ctx, tx, sessions); } };
  return {
    async run({ payload }) {
      return { recordTogether: recordTogether(pricing, { projectId: payload.project_id, sessionId: payload.session_id }) };
    },
  };
}

export function reservationSweep(ctx: AppContext): Schedule {
  return {
    name: 'billing.release-stale-reservations',
    cron: '*/10 * * * *',
    async run() {
      // Once the longest call could have lasted, twice over, and its record had ten minutes to come.
      const released = await ledger.releaseStale(ctx.db, Math.ceil(ctx.config.llm.timeoutMs / 1000) * 2 + 600);
      if (released > 0) ctx.log.warn({ released }, 'billing: released reservations of calls whose usage record never came');
    },
  };
}
