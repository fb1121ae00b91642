// Usage records of LLM proxy calls: one row per call, never updated; each call's event (for loggers,
// billing and webhooks) is written by the same statement, only when its row is new. The calls of a
// project that finish together are group-committed: one statement for all of them.
import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { Static } from 'typebox';
import type { AppContext } from '../../context.ts';
import { GroupCommit } from '../../platform/db/group-commit.ts';
import type { ManyCause } from '../../platform/events/emit.ts';
import { llmCallCompleted, type LlmCall } from './events.ts';

export type CallRecord = Static<typeof LlmCall> & { projectId: string };

/** Writes the records of one project and emits their events, once per request id (a second write changes nothing); how many were new. */
export async function recordCalls(ctx: AppContext, projectId: string, records: CallRecord[]): Promise<number> {
  // Only the events travel: the statement takes the row's columns from each (half the text to build and hold).
  const rows = records.map(({ projectId: _project, ...event }) => ({ event_id: randomUUID(), event }));
  const { row } = await ctx.events.emitEachWithCause(ctx.db, projectId, llmCallCompleted, {
    name: 'llm-usage',
    build: buildRecordCalls,
    values: { llm_rows: JSON.stringify(rows), llm_project_id: projectId },
  });
  return Number(row.recorded);
}

function buildRecordCalls(): ManyCause {
  return {
    ctes: sql`llm_input as (
      select r.event_id, r.event, e.request_id, c.kind as credential_kind, c.id as credential_id, e."user" as user_id, e.client as client_id,
        e.participant, e.provider, e.endpoint, e.model, e.requested_model, e.stream, e.status, e.outcome, e.usage_source, u.input_tokens, u.cached_input_tokens,
        u.cache_write_tokens, u.output_tokens, u.reasoning_tokens, e.request_bytes, e.max_output_tokens, e.choices, e.latency_ms, e.ttfb_ms,
        e.upstream_request_id, e.annotations, e.started_at
      from jsonb_to_recordset(${sql.placeholder('llm_rows')}::jsonb) as r(event_id uuid, event jsonb)
      cross join lateral jsonb_to_record(r.event) as e(request_id uuid, credential jsonb, "user" uuid, client text, participant text, provider text,
        endpoint text, model text, requested_model text, stream boolean, status integer, outcome text, usage_source text, usage jsonb,
        request_bytes integer, max_output_tokens integer, choices integer, latency_ms integer, ttfb_ms integer,
        upstream_request_id text, annotations jsonb, started_at timestamptz)
      cross join lateral jsonb_to_record(e.credential) as c(kind text, id text)
      cross join lateral jsonb_to_record(e.usage) as u(input_tokens bigint, cached_input_tokens bigint, cache_write_tokens bigint, output_tokens bigint,
        reasoning_tokens bigint)
    ),
    llm_record as (
      insert into llm_usage (request_id, project_id, credential_kind, credential_id, user_id, client_id, participant, provider, endpoint, model,
        requested_model, stream, status, outcome, usage_source, input_tokens, cached_input_tokens, cache_write_tokens, output_tokens, reasoning_tokens,
        request_bytes, max_output_tokens, choices, latency_ms, ttfb_ms, upstream_request_id, annotations, started_at)
      select request_id, ${sql.placeholder('llm_project_id')}::uuid, credential_kind, credential_id, user_id, client_id, participant, provider, endpoint, model,
        requested_model, stream, status, outcome, usage_source, input_tokens, cached_input_tokens, cache_write_tokens, output_tokens, reasoning_tokens,
        request_bytes, max_output_tokens, choices, latency_ms, ttfb_ms, upstream_request_id, annotations, started_at
      from llm_input
      on conflict (request_id) do nothing
      returning request_id
    )`,
    events: sql`select i.event_id as id, i.event as data from llm_input i join llm_record r on r.request_id = i.request_id`,
    result: sql`(select count(*) from llm_record)::int as recorded`,
  };
}

/**
 * The proxy's recorder: each call's record joins the next statement of its project, so that a
 * round trip carries many calls instead of one each. No caller waits for a record (its answer has
 * been sent), and calls paced by a model's thinking time finish milliseconds apart, so a record
 * lingers ATRIUM_LLM_RECORD_LINGER_MS for others to join it. `record` resolves once the record is
 * written; `flush` writes what lingers at once (on shutdown).
 */
export function callRecorder(ctx: AppContext): { record: (record: CallRecord) => Promise<void>; flush: () => Promise<void> } {
  const commit = new GroupCommit<CallRecord, void>(async (records) => {
    await recordCalls(ctx, records[0]!.projectId, records);
    return records.map(() => undefined);
  }, { lingerMs: ctx.config.llm.recordLingerMs });
  return { record: (record) => commit.add(record.projectId, record), flush: () => commit.flush() };
}
