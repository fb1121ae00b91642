// List mechanics, once for every resource family. The API pages lists in three styles (the ones the
// official SDKs send):
//   limit/offset                 (rooms, scheduled tasks, runs, agent sessions)    → {"<plural>": [...], "total"}
//   count/offset/filter          (routes, feeds, members, OAuth clients…)          → {"<plural>": [...], "total"}
//   page_size/continuation_token (resource policies)                               → {"<plural>": [...], "continuation_token"}
// This file holds their query-string schemas, their envelopes, and the store side: a page and its
// total in one round trip, and opaque, tamper-proof continuation tokens.
import { count, sql, type SQL } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';
import { Type, type TArray, type TInteger, type TNull, type TObject, type TSchema, type TString, type TUnion } from 'typebox';
import type { SecretBox } from '../crypto/secrets.ts';
import type { Db } from '../db/engine.ts';
import { badRequest } from './errors.ts';

export const MAX_PAGE = 1000;

/** limit/offset query parameters. */
export const LimitOffsetQuery = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: 50, description: 'Most items returned' })),
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0, description: 'Items skipped' })),
};

/** count/offset/filter query parameters; `filter` matches names (case-insensitive substring). */
export const CountOffsetQuery = {
  count: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: 100, description: 'Most items returned' })),
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0, description: 'Items skipped' })),
  filter: Type.Optional(Type.String({ maxLength: 200, description: 'Only items whose name contains this text (case-insensitive)' })),
};

/**
 * A `filter` query parameter for a list of another paging style: a case-insensitive substring of
 * what `what` names, so that a search finds items on every page, not just the one on screen.
 */
export function filterQuery(what: string) {
  return { filter: Type.Optional(Type.String({ maxLength: 200, description: `Only items whose ${what} contains this text (case-insensitive)` })) };
}

/** page_size/continuation_token query parameters. */
export const PageTokenQuery = {
  page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: 100, description: 'Most items returned' })),
  continuation_token: Type.Optional(Type.String({ maxLength: 2000, description: 'From the previous page; absent for the first page' })),
};

/** `{"<key>": [item…], "total": n}` — the envelope of limit/offset and count/offset lists. */
export function ListOf<K extends string, T extends TSchema>(key: K, item: T): TObject<Record<K, TArray<T>> & { total: TInteger }> {
  const properties = { [key]: Type.Array(item), total: Type.Integer({ description: 'Items in the whole list, not just this page' }) };
  return Type.Object(properties as Record<K, TArray<T>> & { total: TInteger });
}

/** `{"<key>": [item…], "continuation_token": string | null}` — the envelope of token-paged lists. */
export function TokenPageOf<K extends string, T extends TSchema>(key: K, item: T): TObject<Record<K, TArray<T>> & { continuation_token: TUnion<[TString, TNull]> }> {
  const properties = {
    [key]: Type.Array(item),
    continuation_token: Type.Union([Type.String(), Type.Null()], { description: 'Pass it to get the next page; null on the last page' }),
  };
  return Type.Object(properties as Record<K, TArray<T>> & { continuation_token: TUnion<[TString, TNull]> });
}

/** One page of a list, whichever style the query used. */
export interface Page {
  limit: number;
  offset: number;
  /** Case-insensitive substring of the name (count/offset/filter lists). */
  filter?: string | undefined;
}

/** The page a limit/offset or count/offset/filter query asks for, defaults applied. */
export function pageOf(query: { limit?: number | undefined; count?: number | undefined; offset?: number | undefined; filter?: string | undefined }): Page {
  return { limit: query.limit ?? query.count ?? 50, offset: query.offset ?? 0, filter: query.filter || undefined };
}

/** A column that carries the size of the whole result next to each row: select it as `total`. */
export const windowTotal = sql<number>`count(*) over ()`.mapWith(Number);

/**
 * A page of rows that select `total: windowTotal` beside their own fields (ordered, limited and
 * offset by the caller): the items without `total`, and the total from the same round trip. Only a
 * page past the end, which has no row to carry the total, costs a second query (`countAll`).
 */
export async function pageResult<T extends { total: number }>(rows: readonly T[], page: Page, countAll: () => Promise<number>): Promise<{ items: Omit<T, 'total'>[]; total: number }> {
  const items = rows.map(({ total: _total, ...item }) => item);
  if (rows.length > 0) return { items, total: rows[0]!.total };
  return { items, total: page.offset > 0 ? await countAll() : 0 };
}

/** `select count(*) from table where …`, the usual `countAll` of `pageResult`. */
export async function countRows(db: Db, table: PgTable, where: SQL | undefined): Promise<number> {
  const [row] = await db.select({ n: count() }).from(table).where(where);
  return Number(row?.n ?? 0);
}

/** A LIKE pattern that matches `filter` literally anywhere (wildcards escaped). */
export function likeContains(filter: string): string {
  return `%${filter.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * Continuation tokens: the position after the last item of a page, sealed with the service's
 * secret key (AES-GCM), so a client can neither read nor forge one, and bound to the list it came
 * from (`scope`, e.g. the project and resource), so it cannot be replayed against another.
 */
export function sealContinuation(box: SecretBox, scope: string, position: unknown): string {
  return box.encrypt(JSON.stringify({ s: scope, p: position })).slice('v1.'.length);
}

/** The position a continuation token holds; 400 when it was altered or belongs to another list. */
export function openContinuation<T>(box: SecretBox, scope: string, token: string): T {
  let sealed: { s?: unknown; p?: T };
  try {
    sealed = JSON.parse(box.decrypt(`v1.${token}`)) as typeof sealed;
  } catch {
    throw badRequest('continuation_token is not valid; start again without it');
  }
  if (sealed.s !== scope) throw badRequest('continuation_token belongs to another list; start again without it');
  return sealed.p as T;
}
