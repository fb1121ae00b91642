// Reading the audit log (the platform writes it: src/platform/audit/log.ts): one project's
// entries, or the deployment's own, newest first, by their order of commit.
import { and, desc, eq, gte, isNull, like, lt, type SQL } from 'drizzle-orm';
import { auditLogTable, type AuditRow } from '../../platform/audit/table.ts';
import type { Db } from '../../platform/db/engine.ts';
import { likeContains } from '../../platform/http/lists.ts';

export interface AuditFilter {
  actor?: string | undefined;
  action?: string | undefined;
  target?: string | undefined;
  targetType?: string | undefined;
  outcome?: string | undefined;
  since?: Date | undefined;
  until?: Date | undefined;
}

/** The entries of a project, or the deployment's own (`projectId` null), newest first: at most `limit` (all without one). */
export async function listEntries(db: Db, projectId: string | null, filter: AuditFilter, limit: number | undefined, before: number | undefined): Promise<AuditRow[]> {
  const t = auditLogTable;
  const conditions: (SQL | undefined)[] = [
    projectId === null ? isNull(t.projectId) : eq(t.projectId, projectId),
    filter.actor === undefined ? undefined : eq(t.actorId, filter.actor),
    filter.action === undefined ? undefined
      : filter.action.endsWith('.*') ? like(t.action, `${likeContains(filter.action.slice(0, -1)).slice(1)}`) : eq(t.action, filter.action),
    filter.target === undefined ? undefined : eq(t.targetId, filter.target),
    filter.targetType === undefined ? undefined : eq(t.targetType, filter.targetType),
    filter.outcome === undefined ? undefined : eq(t.outcome, filter.outcome),
    filter.since === undefined ? undefined : gte(t.at, filter.since),
    filter.until === undefined ? undefined : lt(t.at, filter.until),
    before === undefined ? undefined : lt(t.seq, before),
  ];
  const query = db.select().from(t).where(and(...conditions)).orderBy(desc(t.seq)).$dynamic();
  return limit === undefined ? query : query.limit(limit);
}
