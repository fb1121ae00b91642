// Copying LLM proxy events into feeds: a consumer of `llm.call.completed` that, in the statement
// writing the event, queues one copy job per active logger of the project; the job evaluates the
// logger's filter and publishes the event to the destination feed in the transaction that settles
// it, so a copy is made once even when the job runs twice.
import { eq, sql } from 'drizzle-orm';
import type { AppContext } from '../../context.ts';
import { defineConsumer } from '../../platform/events/catalogue.ts';
import { eventsTable } from '../../platform/events/store.ts';
import type { RunnerOf } from '../../platform/jobs/types.ts';
import { publishAsService } from '../feeds/service.ts';
import { llmCallCompleted } from '../llm-proxy/events.ts';
import { copyJob } from './jobs.ts';
import { matches } from './service.ts';
import * as store from './store.ts';

export const loggerConsumer = defineConsumer({
  name: 'llm_loggers',
  takes: [llmCallCompleted],
  queues: copyJob,
  fanout: (event) => ({
    before: sql`llm_loggers_targets as (select id from llm_loggers where project_id = ${event.projectId} and not paused)`,
    wants: sql`exists (select 1 from llm_loggers_targets)`,
    jobs: {
      from: sql`event, llm_loggers_targets t`,
      key: sql`t.id::text || ':' || event.id::text`,
      payload: { project_id: sql`event.project_id`, logger_id: sql`t.id`, event_id: sql`event.id` },
    },
  }),
});

export function copyHandler(ctx: AppContext): RunnerOf<typeof copyJob> {
  return {
    async run({ payload }, { db }) {
      const projectId = payload.project_id;
      const logger = await store.findLogger(db, projectId, payload.logger_id);
      const [event] = await db.select().from(eventsTable).where(eq(eventsTable.id, payload.event_id));
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
