// The Drizzle handle every store takes, apart from the engines that make it.
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';

/** A Drizzle handle: the database itself or an open transaction (same query API). */
export type Db = PgDatabase<PgQueryResultHKT>;
