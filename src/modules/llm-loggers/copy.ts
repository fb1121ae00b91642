// Copying LLM proxy events into feeds: a consumer of `llm.call.completed` that, in the statement
// writing the event, queues one copy job per active logger of the project; the job evaluates the
// logger's filter and publishes the event to the destination feed in the transaction that settles
// it, so a copy is made once even when the job runs twice.
import { sql } from 'drizzle-orm';
import type { AppContext } from '../../context.ts';
import type { EventConsumer } from '../../platform/events/catalogue.ts';
import { eventsTable } from '../../platform/events/store.ts';
import type { JobHandler } from '../../platform/jobs/worker.ts';
import { publishAsService } from '../feeds/service.ts';
import { LLM_CALL_EVENT } from '../llm-proxy/schema.ts';
import { matches } from './service.ts';
import * as store from './store.ts';

export const COPY_TOPIC = 'llm-loggers.copy';

export const loggerFanout: EventConsumer = {
  name: 'llm_loggers',
  fanout: (event) => (event.definition.type !== LLM_CALL_EVENT ? { wants: sql`false` } : {
    before: sql`llm_loggers_targets as (select id from llm_loggers where project_id = ${event.projectId} and not paused)`,
    wants: sql`exists (select 1 from llm_loggers_targets)`,
    jobs: sql`select ${COPY_TOPIC}::text as topic, t.id::text || ':' || event.id::text as key,
      jsonb_build_object('project_id', event.project_id, 'logger_id', t.id, 'event_id', event.id) as payload
      from event, llm_loggers_targets t`,
  }),
};

export function copyHandler(ctx: AppContext): JobHandler {
  return {
    topic: COPY_TOPIC,
    async run(job, { db }) {
      const projectId = String(job.payload.project_id);
      const logger = await store.findLogger(db, projectId, String(job.payload.logger_id));
      const [event] = await db.select().from(eventsTable).where(sql`${eventsTable.id} = ${String(job.payload.event_id)}::uuid`);
      if (!logger || logger.paused || !event || !matches(logger.filterExpression, event.data)) return {};
      return {
        async record(tx) {
          const { refused } = await publishAsService(ctx, tx, projectId, logger.destinationFeedId, event.data);
          if (refused) ctx.log.warn({ loggerId: logger.id, eventId: event.id, reason: refused }, 'llm logger: the destination feed refused the copy');
        },
      };
    },
  };
}
