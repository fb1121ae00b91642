// Role bindings of resource policies. Every query is keyed by the project id and one resource.
import { and, arrayOverlaps, asc, eq, gt, inArray, or, sql, type SQL } from 'drizzle-orm';
import { pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core';
import { timestamptz } from '../../platform/db/columns.ts';
import type { Db } from '../../platform/db/engine.ts';
import { usersTable } from '../users/tables.ts';

export const bindingsTable = pgTable('resource_policy_bindings', {
  projectId: uuid('project_id').notNull(),
  resourceType: text('resource_type').notNull(),
  resourceId: text('resource_id').notNull(),
  subjectType: text('subject_type').$type<SubjectType>().notNull(),
  subjectKey: text('subject_key').notNull(),
  userId: uuid('user_id'),
  apiKeyId: uuid('api_key_id'),
  roles: text('roles').array().notNull(),
  createdAt: timestamptz('created_at').notNull().defaultNow(),
  updatedAt: timestamptz('updated_at').notNull().defaultNow(),
}, (t) => [primaryKey({ columns: [t.projectId, t.resourceType, t.resourceId, t.subjectType, t.subjectKey] })]);

export type SubjectType = 'user' | 'service_account' | 'userset';

export interface ResourceKey {
  projectId: string;
  resourceType: string;
  resourceId: string;
}

/** A subject as stored: its kind, its key, and the reference that ties the binding to it. */
export interface StoredSubject {
  type: SubjectType;
  key: string;
  userId?: string | undefined;
  apiKeyId?: string | undefined;
}

const ofResource = (r: ResourceKey) => and(eq(bindingsTable.projectId, r.projectId), eq(bindingsTable.resourceType, r.resourceType), eq(bindingsTable.resourceId, r.resourceId));
const ofSubject = (r: ResourceKey, s: StoredSubject) => and(ofResource(r), eq(bindingsTable.subjectType, s.type), eq(bindingsTable.subjectKey, s.key));

/** Adds roles to a subject's binding (creating it), atomically; returns all its roles now. */
export async function addRoles(db: Db, resource: ResourceKey, subject: StoredSubject, roles: readonly string[]): Promise<string[]> {
  const [row] = await db.insert(bindingsTable).values({
    ...resource, subjectType: subject.type, subjectKey: subject.key, userId: subject.userId ?? null, apiKeyId: subject.apiKeyId ?? null, roles: [...roles].sort(),
  }).onConflictDoUpdate({
    target: [bindingsTable.projectId, bindingsTable.resourceType, bindingsTable.resourceId, bindingsTable.subjectType, bindingsTable.subjectKey],
    set: {
      roles: sql`(select array_agg(distinct r order by r) from unnest(${bindingsTable.roles} || excluded.roles) as r)`,
      updatedAt: new Date(),
    },
  }).returning({ roles: bindingsTable.roles });
  return row!.roles;
}

/** A subject's roles on the resource, the row locked until the transaction ends. */
export async function lockRoles(db: Db, resource: ResourceKey, subject: StoredSubject): Promise<string[] | undefined> {
  const [row] = await db.select({ roles: bindingsTable.roles }).from(bindingsTable).where(ofSubject(resource, subject)).for('update');
  return row?.roles;
}

export async function setRoles(db: Db, resource: ResourceKey, subject: StoredSubject, roles: readonly string[]): Promise<void> {
  await db.update(bindingsTable).set({ roles: [...roles], updatedAt: new Date() }).where(ofSubject(resource, subject));
}

export async function deleteBinding(db: Db, resource: ResourceKey, subject: StoredSubject): Promise<void> {
  await db.delete(bindingsTable).where(ofSubject(resource, subject));
}

export async function deleteResourceBindings(db: Db, resource: ResourceKey): Promise<void> {
  await db.delete(bindingsTable).where(ofResource(resource));
}

/** Bindings of any of `subjects`. */
function ofSubjects(subjects: readonly Pick<StoredSubject, 'type' | 'key'>[]): SQL | undefined {
  const byType = Map.groupBy(subjects, (s) => s.type);
  return or(...[...byType].map(([type, list]) => and(eq(bindingsTable.subjectType, type), inArray(bindingsTable.subjectKey, list.map((s) => s.key)))!));
}

/** The roles any of `subjects` holds on the resource, together. */
export async function rolesOfSubjects(db: Db, resource: ResourceKey, subjects: readonly Pick<StoredSubject, 'type' | 'key'>[]): Promise<Set<string>> {
  const rows = await db.select({ roles: bindingsTable.roles }).from(bindingsTable).where(and(ofResource(resource), ofSubjects(subjects)));
  return new Set(rows.flatMap((r) => r.roles));
}

/** The resources of one type on which any of `subjects` holds one of `roles`, by id. */
export async function resourcesOfSubjects(db: Db, projectId: string, resourceType: string, subjects: readonly Pick<StoredSubject, 'type' | 'key'>[], roles: readonly string[]): Promise<string[]> {
  const rows = await db.selectDistinct({ id: bindingsTable.resourceId }).from(bindingsTable)
    .where(and(eq(bindingsTable.projectId, projectId), eq(bindingsTable.resourceType, resourceType), ofSubjects(subjects), arrayOverlaps(bindingsTable.roles, [...roles])));
  return rows.map((r) => r.id);
}

/** Where a page of bindings ends: the last subject of the page. */
export interface Position {
  type: SubjectType;
  key: string;
}

/** One page of the resource's bindings in subject order, users with their names; `after` a position. */
export async function listBindings(db: Db, resource: ResourceKey, limit: number, after: Position | undefined) {
  const past = after
    ? or(gt(bindingsTable.subjectType, after.type), and(eq(bindingsTable.subjectType, after.type), gt(bindingsTable.subjectKey, after.key)))
    : undefined;
  return db.select({
    subjectType: bindingsTable.subjectType,
    subjectKey: bindingsTable.subjectKey,
    roles: bindingsTable.roles,
    email: usersTable.email,
    firstName: usersTable.firstName,
    lastName: usersTable.lastName,
  }).from(bindingsTable).leftJoin(usersTable, eq(usersTable.id, bindingsTable.userId))
    .where(and(ofResource(resource), past))
    .orderBy(asc(bindingsTable.subjectType), asc(bindingsTable.subjectKey))
    .limit(limit);
}
