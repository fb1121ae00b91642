// Pricing LLM proxy calls: a consumer of `llm.call.completed` that, in the statement writing the
// event, queues one pricing job per call (keyed by the event, so it is queued once); the job posts
// the call's usage debit, rollup lines and reservation release in the transaction that settles it,
// and the ledger's idempotency key (`usage:<request id>`) makes a replay change nothing.
import { sql } from 'drizzle-orm';
import type { AppContext } from '../../context.ts';
import type { EventConsumer } from '../../platform/events/catalogue.ts';
import { recordTogether, type JobHandler, type RecordWriter } from '../../platform/jobs/worker.ts';
import type { Schedule } from '../../platform/jobs/scheduler.ts';
import { LLM_CALL_EVENT } from '../llm-proxy/schema.ts';
import { chargeRecharge, priceUsages, RECHARGE_TOPIC, releaseStaleReservations, type CallUsage, type ProjectCall } from './service.ts';

export const PRICE_TOPIC = 'billing.price';

export const usageFanout: EventConsumer = {
  name: 'billing',
  fanout: (event) => (event.definition.type !== LLM_CALL_EVENT ? { wants: sql`false` } : {
    wants: sql`true`,
    jobs: sql`select ${PRICE_TOPIC}::text as topic, event.id::text as key,
      jsonb_build_object('project_id', event.project_id, 'call', event.data) as payload from event`,
  }),
};

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
