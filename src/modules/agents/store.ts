// Managed agents of a project. Every query is keyed by the project id.
import { and, asc, eq, getTableColumns, ilike } from 'drizzle-orm';
import { jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { timestamptz } from '../../platform/db/columns.ts';
import type { Db } from '../../platform/db/engine.ts';
import { countRows, likeContains, pageResult, windowTotal, type Page } from '../../platform/http/lists.ts';

export const agentsTable = pgTable('managed_agents', {
  id: uuid('id').primaryKey(),
  projectId: uuid('project_id').notNull(),
  name: text('name').notNull(),
  configuration: jsonb('configuration').$type<Record<string, unknown>>().notNull(),
  permissions: jsonb('permissions').$type<Record<string, unknown>>().notNull().default({}),
  createdAt: timestamptz('created_at').notNull().defaultNow(),
  updatedAt: timestamptz('updated_at').notNull().defaultNow(),
});

export type AgentRow = typeof agentsTable.$inferSelect;

export async function insertAgent(db: Db, agent: typeof agentsTable.$inferInsert): Promise<AgentRow | undefined> {
  const [row] = await db.insert(agentsTable).values(agent).onConflictDoNothing({ target: [agentsTable.projectId, agentsTable.name] }).returning();
  return row;
}

export async function findAgentByName(db: Db, projectId: string, name: string): Promise<AgentRow | undefined> {
  const [row] = await db.select().from(agentsTable).where(and(eq(agentsTable.projectId, projectId), eq(agentsTable.name, name)));
  return row;
}

export async function findAgentById(db: Db, projectId: string, id: string): Promise<AgentRow | undefined> {
  const [row] = await db.select().from(agentsTable).where(and(eq(agentsTable.projectId, projectId), eq(agentsTable.id, id)));
  return row;
}

export async function listAgents(db: Db, projectId: string, page: Page) {
  const where = and(eq(agentsTable.projectId, projectId), page.filter ? ilike(agentsTable.name, likeContains(page.filter)) : undefined);
  const rows = await db.select({ ...getTableColumns(agentsTable), total: windowTotal }).from(agentsTable).where(where)
    .orderBy(asc(agentsTable.name), asc(agentsTable.id)).limit(page.limit).offset(page.offset);
  return pageResult(rows, page, () => countRows(db, agentsTable, where));
}

export async function updateAgent(db: Db, projectId: string, id: string, changes: Pick<AgentRow, 'name' | 'configuration'>): Promise<AgentRow | undefined> {
  const [row] = await db.update(agentsTable).set({ ...changes, updatedAt: new Date() })
    .where(and(eq(agentsTable.projectId, projectId), eq(agentsTable.id, id))).returning();
  return row;
}

export async function deleteAgent(db: Db, projectId: string, id: string): Promise<boolean> {
  const rows = await db.delete(agentsTable).where(and(eq(agentsTable.projectId, projectId), eq(agentsTable.id, id))).returning({ id: agentsTable.id });
  return rows.length > 0;
}
