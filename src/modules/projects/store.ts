// Projects and their members.
import { and, arrayOverlaps, asc, count, eq, ilike, or, sql } from 'drizzle-orm';
import { alias, boolean, jsonb, pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core';
import { timestamptz } from '../../platform/db/columns.ts';
import type { Db } from '../../platform/db/engine.ts';
import { likeContains, pageResult, windowTotal, type Page } from '../../platform/http/lists.ts';
import { hasSecondFactorSql, usersTable } from '../users/tables.ts';

export const projectsTable = pgTable('projects', {
  id: uuid('id').primaryKey(),
  name: text('name').notNull(),
  ownerUserId: uuid('owner_user_id'),
  settings: jsonb('settings').$type<Record<string, unknown>>().notNull().default({}),
  enabled: boolean('enabled').notNull().default(true),
  adminsNeedSecondFactor: boolean('admins_need_second_factor').notNull().default(false),
  createdAt: timestamptz('created_at').notNull().defaultNow(),
});

export const projectMembersTable = pgTable('project_members', {
  projectId: uuid('project_id').notNull(),
  userId: uuid('user_id').notNull(),
  roles: text('roles').array().notNull(),
  createdAt: timestamptz('created_at').notNull().defaultNow(),
}, (t) => [primaryKey({ columns: [t.projectId, t.userId] })]);

export type ProjectRow = typeof projectsTable.$inferSelect;

export async function insertProject(db: Db, project: typeof projectsTable.$inferInsert): Promise<ProjectRow> {
  const [row] = await db.insert(projectsTable).values(project).returning();
  return row!;
}

export async function findProject(db: Db, projectId: string): Promise<ProjectRow | undefined> {
  const [row] = await db.select().from(projectsTable).where(eq(projectsTable.id, projectId));
  return row;
}

export async function findProjectsOfUser(db: Db, userId: string): Promise<ProjectRow[]> {
  return db.select({ project: projectsTable }).from(projectsTable)
    .innerJoin(projectMembersTable, eq(projectMembersTable.projectId, projectsTable.id))
    .where(eq(projectMembersTable.userId, userId))
    .orderBy(asc(projectsTable.createdAt), asc(projectsTable.id))
    .then((rows) => rows.map((r) => r.project));
}

export async function findProjectByOwnerAndName(db: Db, ownerUserId: string, name: string): Promise<ProjectRow | undefined> {
  const [row] = await db.select().from(projectsTable).where(and(eq(projectsTable.ownerUserId, ownerUserId), eq(projectsTable.name, name))).orderBy(asc(projectsTable.createdAt)).limit(1);
  return row;
}

export async function replaceSettings(db: Db, projectId: string, settings: Record<string, unknown>): Promise<ProjectRow | undefined> {
  const [row] = await db.update(projectsTable).set({ settings }).where(eq(projectsTable.id, projectId)).returning();
  return row;
}

/**
 * Locks the project row until the transaction ends, so that membership changes of one project run
 * one at a time and the last-admin check sees every committed change.
 */
export async function lockProject(db: Db, projectId: string): Promise<boolean> {
  const rows = await db.select({ id: projectsTable.id }).from(projectsTable).where(eq(projectsTable.id, projectId)).for('update');
  return rows.length > 0;
}

export async function memberRoles(db: Db, projectId: string, userId: string): Promise<string[] | undefined> {
  const [row] = await db.select({ roles: projectMembersTable.roles }).from(projectMembersTable)
    .where(and(eq(projectMembersTable.projectId, projectId), eq(projectMembersTable.userId, userId)));
  return row?.roles;
}

/**
 * A member's roles, and whether a second factor is asked of the project's admins and this member has
 * one (looked up only when it is asked: by the project, or by the deployment with `required`).
 */
export async function memberAccess(db: Db, projectId: string, userId: string, required: boolean) {
  const [row] = await db.select({
    roles: projectMembersTable.roles,
    required: sql<boolean>`(${projectsTable.adminsNeedSecondFactor} or ${required})`,
    hasSecondFactor: sql<boolean>`case when ${projectsTable.adminsNeedSecondFactor} or ${required} then ${hasSecondFactorSql(projectMembersTable.userId)} else true end`,
  }).from(projectMembersTable).innerJoin(projectsTable, eq(projectsTable.id, projectMembersTable.projectId))
    .where(and(eq(projectMembersTable.projectId, projectId), eq(projectMembersTable.userId, userId)));
  return row;
}

export async function setAdminsNeedSecondFactor(db: Db, projectId: string, value: boolean): Promise<ProjectRow | undefined> {
  const [row] = await db.update(projectsTable).set({ adminsNeedSecondFactor: value }).where(eq(projectsTable.id, projectId)).returning();
  return row;
}

/** Adds a member or replaces their roles. */
export async function upsertMember(db: Db, projectId: string, userId: string, roles: string[]): Promise<void> {
  await db.insert(projectMembersTable).values({ projectId, userId, roles })
    .onConflictDoUpdate({ target: [projectMembersTable.projectId, projectMembersTable.userId], set: { roles } });
}

export async function setMemberRoles(db: Db, projectId: string, userId: string, roles: string[]): Promise<boolean> {
  const rows = await db.update(projectMembersTable).set({ roles })
    .where(and(eq(projectMembersTable.projectId, projectId), eq(projectMembersTable.userId, userId))).returning({ userId: projectMembersTable.userId });
  return rows.length > 0;
}

export async function deleteMember(db: Db, projectId: string, userId: string): Promise<boolean> {
  const rows = await db.delete(projectMembersTable)
    .where(and(eq(projectMembersTable.projectId, projectId), eq(projectMembersTable.userId, userId))).returning({ userId: projectMembersTable.userId });
  return rows.length > 0;
}

export async function countAdmins(db: Db, projectId: string): Promise<number> {
  const [row] = await db.select({ n: count() }).from(projectMembersTable)
    .where(and(eq(projectMembersTable.projectId, projectId), sql`'admin' = any(${projectMembersTable.roles})`));
  return Number(row?.n ?? 0);
}

export async function listMembers(db: Db, projectId: string, page: Page) {
  const where = and(
    eq(projectMembersTable.projectId, projectId),
    page.filter ? or(ilike(usersTable.email, likeContains(page.filter)), ilike(usersTable.firstName, likeContains(page.filter)), ilike(usersTable.lastName, likeContains(page.filter))) : undefined,
  );
  const rows = await db.select({ user: usersTable, roles: projectMembersTable.roles, addedAt: projectMembersTable.createdAt, secondFactor: sql<boolean>`${hasSecondFactorSql(usersTable.id)}`, total: windowTotal })
    .from(projectMembersTable).innerJoin(usersTable, eq(usersTable.id, projectMembersTable.userId))
    .where(where).orderBy(asc(usersTable.email), asc(usersTable.id)).limit(page.limit).offset(page.offset);
  return pageResult(rows, page, async () => {
    const [row] = await db.select({ n: count() }).from(projectMembersTable).innerJoin(usersTable, eq(usersTable.id, projectMembersTable.userId)).where(where);
    return Number(row?.n ?? 0);
  });
}

/** Whether `userId` is a member of some project where `viewerId` holds one of `roles`. */
export async function sharesProjectWithRole(db: Db, viewerId: string, userId: string, roles: readonly string[]): Promise<boolean> {
  const viewer = alias(projectMembersTable, 'viewer');
  const rows = await db.select({ projectId: viewer.projectId }).from(viewer)
    .innerJoin(projectMembersTable, eq(projectMembersTable.projectId, viewer.projectId))
    .where(and(eq(viewer.userId, viewerId), eq(projectMembersTable.userId, userId), arrayOverlaps(viewer.roles, [...roles])))
    .limit(1);
  return rows.length > 0;
}
