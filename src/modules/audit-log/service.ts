// The audit log of a project, as the API, the console and the CLI read it, and the deployment's
// own entries, as the CLI reads them on the server's host.
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

export type AuditFilters = Omit<AuditQuery, 'page_size' | 'continuation_token'>;

function filterOf(filters: AuditFilters): store.AuditFilter {
  return {
    actor: filters.actor,
    action: filters.action,
    target: filters.target,
    targetType: filters.target_type,
    outcome: filters.outcome,
    since: filters.since === undefined ? undefined : new Date(filters.since),
    until: filters.until === undefined ? undefined : new Date(filters.until),
  };
}

/** One page of the project's entries, newest first; the token carries on with the same filters only. */
export async function listEntries(ctx: AppContext, projectId: string, query: AuditQuery) {
  const { page_size: size = 100, continuation_token: token, ...filters } = query;
  const scope = `audit-log:${projectId}:${JSON.stringify(filters)}`;
  const before = token ? openContinuation<number>(ctx.secrets, scope, token) : undefined;
  const rows = await store.listEntries(ctx.db, projectId, filterOf(filters), size + 1, before);
  const page = rows.slice(0, size);
  const last = page.at(-1);
  return { entries: page.map(entryView), continuation_token: rows.length > size && last ? sealContinuation(ctx.secrets, scope, last.seq) : null };
}

/**
 * The deployment's own entries (no project: sign-ins, second factors, the first run, key rotations),
 * newest first, filtered as a project's are: at most `limit`, every one with 0. For the operator at
 * the server's shell (`atrium audit deployment`); no route serves them.
 */
export async function listDeploymentEntries(ctx: AppContext, filters: AuditFilters, limit: number) {
  return (await store.listEntries(ctx.db, null, filterOf(filters), limit === 0 ? undefined : limit, undefined)).map(entryView);
}
