// The audit log of a project, as the API, the console and the CLI read it.
import type { AppContext } from '../../context.ts';
import { entryView } from '../../platform/audit/view.ts';
import { openContinuation, sealContinuation } from '../../platform/http/lists.ts';
import * as store from './store.ts';

export interface AuditQuery {
  page_size?: number | undefined;
  continuation_token?: string | undefined;
  actor?: string | undefined;
  action?: string | undefined;
  target?: string | undefined;
  target_type?: string | undefined;
  outcome?: string | undefined;
  since?: string | undefined;
  until?: string | undefined;
}

/** One page of the project's entries, newest first; the token carries on with the same filters only. */
export async function listEntries(ctx: AppContext, projectId: string, query: AuditQuery) {
  const { page_size: size = 100, continuation_token: token, ...filters } = query;
  const scope = `audit-log:${projectId}:${JSON.stringify(filters)}`;
  const before = token ? openContinuation<number>(ctx.secrets, scope, token) : undefined;
  const filter: store.AuditFilter = {
    actor: filters.actor,
    action: filters.action,
    target: filters.target,
    targetType: filters.target_type,
    outcome: filters.outcome,
    since: filters.since === undefined ? undefined : new Date(filters.since),
    until: filters.until === undefined ? undefined : new Date(filters.until),
  };
  const rows = await store.listEntries(ctx.db, projectId, filter, size + 1, before);
  const page = rows.slice(0, size);
  const last = page.at(-1);
  return { entries: page.map(entryView), continuation_token: rows.length > size && last ? sealContinuation(ctx.secrets, scope, last.seq) : null };
}
