// Job types: each kind of background job declared once, with its outbox topic, the TypeBox schema
// of its payload and whether it is keyed; the module's descriptor pairs it with the handler that
// runs it (`handles`), and docs/events.md lists them all. Enqueueing goes through the
// type (`job.of({ key, payload })`), so a payload that does not fit is a compile error where the
// job is written; the handler receives jobs whose payload has been checked against the schema
// (a row that does not fit is marked dead with the reason instead of reaching the handler).
import { sql, type SQL } from 'drizzle-orm';
import type { Static, TObject } from 'typebox';
import { Compile } from 'typebox/compile';
import type { ClaimedJob, NewJob } from './outbox.ts';
import type { JobContext, JobHandler, JobResult } from './worker.ts';

/** A claimed job of one type: its payload checked, its key present when the type is keyed. */
export interface Job<P, Keyed extends boolean> extends Omit<ClaimedJob, 'payload' | 'key'> {
  readonly payload: P;
  readonly key: Keyed extends true ? string : string | null;
}

/** What runs the jobs of one type (see `JobHandler` for what each part does). */
export interface JobRunner<P, Keyed extends boolean> {
  readonly maxAttempts?: number;
  run(job: Job<P, Keyed>, context: JobContext): Promise<JobResult>;
  prefetch?(jobs: readonly Job<P, Keyed>[], context: JobContext): Promise<void>;
  close?(): void | Promise<void>;
}

/** The claimed jobs of a job type, and what runs them. */
export type JobOf<T> = T extends JobType<infer P, infer Keyed> ? Job<P, Keyed> : never;
export type RunnerOf<T> = T extends JobType<infer P, infer Keyed> ? JobRunner<P, Keyed> : never;

/** A job to write: keyed types require a key (at most one live job per topic and key). */
export type JobInput<P, Keyed extends boolean> = { payload: P; runAt?: Date | undefined } & (Keyed extends true ? { key: string } : { key?: string | undefined });

/** Jobs as rows of a select: `from` is its FROM list (WITH items), the rest SQL values over it. */
export type JobRows<P, Keyed extends boolean> = {
  from: SQL;
  payload: { [F in keyof Required<P>]: SQL };
  /** When each job falls due (null: now). */
  runAt?: SQL | undefined;
} & (Keyed extends true ? { key: SQL } : { key?: SQL | undefined });

// Names from the code (topics, payload fields), written into statements as they read.
const literal = (name: string) => {
  if (!/^[a-z][a-z0-9_.-]*$/.test(name)) throw new Error(`${JSON.stringify(name)} cannot be a job topic or payload field`);
  return sql.raw(`'${name}'`);
};

export interface JobType<P = any, Keyed extends boolean = boolean> {
  /** The outbox topic, e.g. `webhooks.deliver`. */
  readonly topic: string;
  readonly description: string;
  /** The payload's schema; jobs whose payload does not fit it are not run. */
  readonly payload: TObject;
  /** What the key names, for keyed types (the de-duplication key is then always present). */
  readonly key: string | undefined;
  /** A job of this type, for `enqueue`. */
  of(input: JobInput<P, Keyed>): NewJob;
  /**
   * Jobs of this type written by SQL (`enqueueWithSql`, an event consumer's fan-out): a select of
   * `(topic, key, payload[, run_at])`, one job per row of `from`, each payload field an SQL value.
   */
  select(rows: JobRows<P, Keyed>): SQL;
  /** The worker's handler of this topic: checks each payload, then runs it with `runner`. */
  bind(runner: JobRunner<P, Keyed>): JobHandler;
  /** Phantom field carrying whether jobs are keyed; never set. */
  readonly __keyed?: Keyed;
}

interface JobTypeOptions<S extends TObject> {
  topic: string;
  description: string;
  payload: S;
  /** For keyed types, what the key is (e.g. "the delivery id"): at most one live job per key, and every job has one. */
  key?: string;
}

export function defineJob<S extends TObject>(options: JobTypeOptions<S> & { key: string }): JobType<Static<S>, true>;
export function defineJob<S extends TObject>(options: JobTypeOptions<S> & { key?: undefined }): JobType<Static<S>, false>;
export function defineJob<S extends TObject, Keyed extends boolean>(options: JobTypeOptions<S>): JobType<Static<S>, Keyed> {
  const check = Compile(options.payload);
  const problem = (job: ClaimedJob): string | undefined => {
    if (options.key !== undefined && job.key === null) return `a ${options.topic} job needs a key (${options.key})`;
    if (!check.Check(job.payload)) return `the payload does not fit ${options.topic}: ${[...check.Errors(job.payload)].map((e) => `${e.instancePath || '/'} ${e.message}`).join('; ')}`;
    return undefined;
  };
  const typed = (job: ClaimedJob) => job as unknown as Job<Static<S>, Keyed>;
  return {
    topic: options.topic,
    description: options.description,
    payload: options.payload,
    key: options.key,
    of: (input) => ({ topic: options.topic, key: input.key, payload: input.payload as Record<string, unknown>, runAt: input.runAt }),
    select(rows) {
      const fields = Object.entries(rows.payload as Record<string, SQL>).map(([field, value]) => sql`${literal(field)}, ${value}`);
      return sql`select ${literal(options.topic)}::text as topic, ${rows.key ?? sql`null`}::text as key, jsonb_build_object(${sql.join(fields, sql`, `)}) as payload${rows.runAt ? sql`, ${rows.runAt} as run_at` : sql``} from ${rows.from}`;
    },
    bind(runner) {
      return {
        topic: options.topic,
        ...(runner.maxAttempts === undefined ? {} : { maxAttempts: runner.maxAttempts }),
        async run(job, context) {
          const refused = problem(job);
          return refused === undefined ? runner.run(typed(job), context) : { dead: refused };
        },
        ...(runner.prefetch ? {
          prefetch: (jobs: readonly ClaimedJob[], context: JobContext) => runner.prefetch!(jobs.filter((j) => problem(j) === undefined).map(typed), context),
        } : {}),
        ...(runner.close ? { close: () => runner.close!() } : {}),
      };
    },
  };
}

/** A job type with the handler that runs it, as a module's descriptor lists it. */
export interface JobDeclaration<Ctx> {
  readonly type: JobType;
  /** The worker's handler, built once per instance with the service's context. */
  handler(ctx: Ctx): JobHandler;
  /** The name of the function that builds the runner (docs/events.md). */
  readonly runner: string;
}

/** Pairs a job type with its runner; the runner's job type is checked against the payload's. */
export function handles<P, Keyed extends boolean, Ctx>(type: JobType<P, Keyed>, runner: (ctx: Ctx) => JobRunner<P, Keyed>): JobDeclaration<Ctx> {
  // The map of events and jobs names the function; an anonymous one would leave a blank there.
  if (!runner.name) throw new Error(`The runner of ${type.topic} must be a named function`);
  return { type, handler: (ctx) => type.bind(runner(ctx)), runner: runner.name };
}
