// What the suites that walk the route table share (tenant isolation, the fuzz): real resources made
// by every module's fixtures, a route's path and query filled from them, a valid body, and a
// fingerprint of the whole database to prove that a refused request changed nothing.
import { sql } from 'drizzle-orm';
import { modules } from '../../src/modules/index.ts';
import { createUser } from '../../src/modules/users/service.ts';
import { rowsOf } from '../../src/platform/db/rows.ts';
import { FIXTURES, type Fixture, type FixtureClient } from './fixtures.ts';
import { call, type Tenant, type TestService } from './service.ts';
import { fillPath, pathParams, type RouteInfo } from './routes.ts';
import { sampleOf } from './samples.ts';

/** The parameters of one project's fixtures: by the module that provided them, and first-wins overall. */
export interface FixtureValues {
  byModule: Map<string, Record<string, string>>;
  any: Record<string, string>;
}

function fixtureClient(service: TestService, tenant: Tenant): FixtureClient {
  return {
    projectId: tenant.projectId,
    userId: tenant.userId,
    async request(method, path, options = {}) {
      const token = options.as === 'user' ? tenant.userToken : tenant.apiKey;
      const r = options.bytes !== undefined
        ? await call(service, method, path, { token, body: options.bytes, headers: { 'content-type': 'application/octet-stream' } })
        : await call(service, method, path, { token, json: options.json });
      if (r.status < 200 || r.status >= 300) throw new Error(`fixture request ${method} ${path} answered ${r.status}: ${JSON.stringify(r.body)}`);
      return r.body;
    },
    async newUser() {
      const email = `fixture-${Math.random().toString(36).slice(2)}@example.test`;
      const user = await createUser(service.ctx.db, { email, password: 'correct horse battery staple', emailVerified: true });
      return { id: user.id, email };
    },
  };
}

/**
 * Runs the modules' fixtures in one project, each after the fixtures it needs: all of them, or only
 * those a route's parameters need (its own module's first).
 */
export async function createFixtures(service: TestService, tenant: Tenant, forRoute?: RouteInfo): Promise<FixtureValues> {
  const client = fixtureClient(service, tenant);
  const values: FixtureValues = { byModule: new Map(), any: { project_id: tenant.projectId } };
  const unknown = Object.keys(FIXTURES).filter((name) => !modules.some((m) => m.name === name));
  if (unknown.length > 0) throw new Error(`fixtures of modules that do not exist: ${unknown.join(', ')}`);
  const all = modules.flatMap((m) => (FIXTURES[m.name] ?? []).map((fixture) => ({ module: m.name, fixture })));
  let pending = forRoute ? neededFixtures(all, routeParams(forRoute), forRoute.module) : all;
  while (pending.length > 0) {
    const ready = pending.filter(({ fixture }) => (fixture.needs ?? []).every((n) => values.any[n] !== undefined));
    if (ready.length === 0) throw new Error(`fixtures need parameters nobody provides: ${pending.map((p) => `${p.module} needs ${p.fixture.needs?.join(', ')}`).join('; ')}`);
    for (const { module, fixture } of ready) {
      const made = await fixture.create(client, values.any);
      for (const name of fixture.provides) {
        if (made[name] === undefined) throw new Error(`the ${module} fixture promised ${name} but did not return it`);
      }
      values.byModule.set(module, { ...values.byModule.get(module), ...made });
      for (const [name, value] of Object.entries(made)) values.any[name] ??= value;
    }
    pending = pending.filter((p) => !ready.includes(p));
  }
  return values;
}

function neededFixtures<T extends { module: string; fixture: Fixture }>(all: readonly T[], wanted: readonly string[], preferModule: string | undefined): T[] {
  const chosen = new Set<T>();
  const want = [...wanted];
  const ordered = [...all].sort((a, b) => Number(b.module === preferModule) - Number(a.module === preferModule));
  for (let name = want.pop(); name !== undefined; name = want.pop()) {
    const provider = ordered.find((f) => f.fixture.provides.includes(name!));
    if (!provider || chosen.has(provider)) continue;
    chosen.add(provider);
    want.push(...(provider.fixture.needs ?? []));
  }
  return all.filter((f) => chosen.has(f));
}

/** The value of a parameter for a route: its own module's fixture first, then any module's. */
export function paramValue(route: RouteInfo, values: FixtureValues, name: string): string | undefined {
  if (name === 'project_id') return values.any.project_id;
  return (route.module ? values.byModule.get(route.module)?.[name] : undefined) ?? values.any[name];
}

/** The path parameters and required query parameters of a route. */
function routeParams(route: RouteInfo): string[] {
  return [...pathParams(route.url), ...(route.schema?.querystring?.required ?? [])];
}

/** Parameters of a route that no fixture provides (a route the walk cannot reach). */
export function missingParams(route: RouteInfo, values: FixtureValues): string[] {
  return routeParams(route).filter((name) => paramValue(route, values, name) === undefined);
}

/** The route's path with its parameters and required query filled from a project's fixtures. */
export function routePath(route: RouteInfo, values: FixtureValues): string {
  const path = fillPath(route.url, (name) => encodeURIComponent(paramValue(route, values, name) ?? `missing-${name}`));
  const required = route.schema?.querystring?.required ?? [];
  if (required.length === 0) return path;
  return `${path}?${new URLSearchParams(required.map((name): [string, string] => [name, paramValue(route, values, name) ?? `missing-${name}`]))}`;
}

/** A request body the route's schema accepts (raw bytes for upload routes, which take no JSON). */
export function validBody(route: RouteInfo): { json: unknown } | { body: string; headers: Record<string, string> } | Record<string, never> {
  if (route.method !== 'POST' && route.method !== 'PUT' && route.method !== 'PATCH') return {};
  if (route.schema?.body === undefined) return { body: 'walk', headers: { 'content-type': 'application/octet-stream' } };
  return { json: sampleOf(route.schema.body as Record<string, unknown>, `${route.method} ${route.url} body`) };
}

/**
 * Whether an error answer is in the error shape of a protocol whose clients expect their own
 * (docs/errors.md): OTLP endpoints answer a google.rpc.Status, as JSON `{code, message}` or protobuf
 * (the encoding of the request), with the catalogue code in its message; the LLM proxy's Anthropic
 * routes `{"type": "error", "error": {type, message}}` (its OpenAI routes carry the catalogue code
 * as `error.code`, the catalogue's own shape). Every other route answers `{"error": {code, message}}`.
 */
export function isProtocolError(path: string, contentType: string, body: unknown): boolean {
  if (path.startsWith('/otlp/')) {
    if (contentType.startsWith('application/x-protobuf')) return true;
    const status = body as { code?: unknown; message?: unknown } | null;
    return contentType.includes('json') && Number.isInteger(status?.code) && typeof status?.message === 'string';
  }
  if (path.startsWith('/anthropic/')) {
    const answer = body as { type?: unknown; error?: { type?: unknown; message?: unknown } } | null;
    return contentType.includes('json') && answer?.type === 'error' && typeof answer.error?.type === 'string' && typeof answer.error?.message === 'string';
  }
  return false;
}

/**
 * Tables whose rows change without being asked to: migrations, and the cluster-wide rate-limit
 * counters, which every request to a limited endpoint bumps whatever its answer (that is the point).
 */
// The audit log records refusals: a refused request writes its entry there and nowhere else.
const VOLATILE_TABLES = new Set(['schema_migrations', 'rate_limits', 'audit_log']);

/** The table the fingerprint's triggers note written tables in (it exists only in test databases). */
const TOUCHED = 'test_fingerprint_touched';

/** Each service's digest per table, as of its last fingerprint. */
const digests = new WeakMap<TestService, Map<string, string>>();

/**
 * One digest of every row of every table: equal before and after means nothing was written.
 *
 * Hashing every table costs more than most requests, so only tables written since the last
 * fingerprint are hashed again: a statement-level trigger on each table notes its name (in the
 * writing transaction, so a rolled-back write notes nothing), and the other tables keep their
 * digest. A noted table whose rows end up the same (an update to the same values) digests the same.
 */
export async function fingerprint(service: TestService): Promise<string> {
  // On a shared database, other test files' writes would show up as this request's.
  if (!service.ownDatabase) throw new Error('fingerprint needs a service with a database of its own (one started without a DATABASE_URL in env)');
  const db = service.ctx.db;
  let known = digests.get(service);
  let stale: string[];
  if (!known) {
    known = new Map();
    digests.set(service, known);
    stale = rowsOf<{ name: string }>(await db.execute(sql`select tablename as name from pg_tables where schemaname = 'public' order by tablename`))
      .map((t) => t.name).filter((name) => !VOLATILE_TABLES.has(name) && name !== TOUCHED);
    await db.execute(sql.raw(`create unlogged table ${TOUCHED} (name text primary key)`));
    await db.execute(sql.raw(`create function ${TOUCHED}_note() returns trigger language plpgsql as $$
      begin
        insert into ${TOUCHED} values (tg_table_name) on conflict do nothing;
        return null;
      end $$`));
    for (const name of stale) {
      await db.execute(sql.raw(`create trigger ${TOUCHED} after insert or update or delete on "${name}" for each statement execute function ${TOUCHED}_note()`));
    }
  } else {
    stale = rowsOf<{ name: string }>(await db.execute(sql.raw(`delete from ${TOUCHED} returning name`))).map((t) => t.name);
  }
  if (stale.length > 0) {
    const parts = stale.map((name) => sql`select ${name} as name, md5(coalesce(string_agg(t::text, '|' order by t::text), '')) as digest from ${sql.identifier(name)} t`);
    for (const row of rowsOf<{ name: string; digest: string }>(await db.execute(sql.join(parts, sql` union all `)))) known.set(row.name, row.digest);
  }
  return [...known.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([name, digest]) => `${name}:${digest}`).join(',');
}
