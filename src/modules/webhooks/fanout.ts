// Webhooks as a consumer of domain events: when an event is emitted, one pending delivery per
// enabled webhook of the project subscribed to its type (by name or `*`; `call` webhooks only for
// events that name a room) and one delivery job per delivery are written in the emitting statement.
import { sql } from 'drizzle-orm';
import { ALL_EVENTS, defineConsumer } from '../../platform/events/catalogue.ts';
import { deliverJob } from './jobs.ts';

export const webhookConsumer = defineConsumer({
  name: 'webhooks',
  takes: ALL_EVENTS,
  queues: deliverJob,
  fanout: (event) => ({
    before: sql`webhooks_targets as (
      select id from webhooks
      where project_id = ${event.projectId} and enabled
        and (${event.definition.type} = any(events) or '*' = any(events))
        and (action <> 'call' or ${event.definition.room})
    )`,
    wants: sql`exists (select 1 from webhooks_targets)`,
    after: sql`webhooks_deliveries as (
      insert into webhook_deliveries (id, project_id, webhook_id, event_id, next_attempt_at, created_at)
      select gen_random_uuid(), event.project_id, t.id, event.id, event.created_at, event.created_at
      from event, webhooks_targets t
      returning id, project_id
    )`,
    jobs: { from: sql`webhooks_deliveries`, key: sql`id`, payload: { project_id: sql`project_id` } },
  }),
});
