// Usage records of LLM proxy calls: one row per call, never updated; the call's event (for loggers
// and webhooks) is written by the same statement, only when the row is new.
import { sql } from 'drizzle-orm';
import type { AppContext } from '../../context.ts';
import { llmCallCompleted } from './events.ts';
import type { Static } from 'typebox';
import type { LlmCall } from './events.ts';

export type CallRecord = Static<typeof LlmCall> & { projectId: string };

/** Writes the record and emits its event, once per request id (a second write changes nothing). */
export async function recordCall(ctx: AppContext, record: CallRecord): Promise<void> {
  const { projectId, ...event } = record;
  const { usage } = record;
  await ctx.events.emitWithCause(ctx.db, projectId, llmCallCompleted, event, {
    ctes: sql`llm_record as (
      insert into llm_usage (request_id, project_id, credential_kind, credential_id, user_id, client_id, participant, provider, endpoint, model, stream,
        status, outcome, usage_source, input_tokens, cached_input_tokens, cache_write_tokens, output_tokens, reasoning_tokens, latency_ms, ttfb_ms,
        upstream_request_id, annotations, started_at)
      values (${record.request_id}::uuid, ${projectId}::uuid, ${record.credential.kind}, ${record.credential.id}, ${record.user}::uuid, ${record.client}, ${record.participant},
        ${record.provider}, ${record.endpoint}, ${record.model}, ${record.stream}, ${record.status}, ${record.outcome}, ${record.usage_source},
        ${usage.input_tokens}, ${usage.cached_input_tokens}, ${usage.cache_write_tokens}, ${usage.output_tokens}, ${usage.reasoning_tokens},
        ${record.latency_ms}, ${record.ttfb_ms}, ${record.upstream_request_id}, ${JSON.stringify(record.annotations)}::jsonb, ${record.started_at}::timestamptz)
      on conflict (request_id) do nothing
      returning request_id
    )`,
    happened: sql`exists (select 1 from llm_record)`,
    result: sql`(select count(*) from llm_record)::int as recorded`,
  });
}
