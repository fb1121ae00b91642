// Boot: config → database (migrated) → shared services → app → workers, and graceful shutdown.
// Everything a module contributes (verifiers, memberships, events, job handlers, resource types
// and policy bindings) is collected from the one module list, src/modules/index.ts.
import { join } from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import { buildApp, type BuiltApp } from './app.ts';
import type { Config } from './config.ts';
import { AuditLog } from './platform/audit/log.ts';
import type { AppContext } from './context.ts';
import { modules as allModules } from './modules/index.ts';
import { FileBlobStore, type BlobStore } from './platform/blobs/store.ts';
import { SecretBox, loadSecretKeys } from './platform/crypto/secrets.ts';
import type { SealedColumns } from './platform/crypto/sealed.ts';
import { SigningKeys, signingKeysSealed } from './platform/crypto/signing-keys.ts';
import { createMailer } from './platform/mail/mailer.ts';
import { openDatabase } from './platform/db/engine.ts';
import { migrate } from './platform/db/migrate.ts';
import { Events } from './platform/events/emit.ts';
import { Auth } from './platform/http/auth.ts';
import { Authority } from './platform/http/authority.ts';
import { admitEveryCall } from './platform/limits/admission.ts';
import type { Module } from './module.ts';
import { DeclaredSchedules, Scheduler } from './platform/jobs/scheduler.ts';
import type { JobDeclaration } from './platform/jobs/types.ts';
import { JobWorker, type Clock } from './platform/jobs/worker.ts';
import { createLogger } from './platform/logging.ts';

export interface Background {
  start(): void;
  stop(): Promise<void>;
}

/**
 * The background work every instance runs unless told otherwise: the outbox worker, with the job
 * handlers of every module and one per schedule, and the scheduler that enqueues the schedules'
 * runs and fires the modules' timetables. Instances on one PostgreSQL share both (SKIP LOCKED).
 * Both judge due times by the database's clock, or by `clock` when one is given (a test's, to let
 * a timeout pass without waiting for it). Throws on an invalid schedule.
 */
export function defaultWorkers(ctx: AppContext, modules: readonly Module[] = allModules, clock?: Clock): Background[] {
  const schedules = new DeclaredSchedules(modules.flatMap((m) => m.schedules?.(ctx) ?? []));
  const handlers = [...jobDeclarations(modules).map((job) => job.handler(ctx)), ...schedules.handlers()];
  const { pollMs, batchSize, concurrency, leaseMs } = ctx.config.jobs;
  const jobs = new JobWorker(ctx.database, { handlers, pollMs, batchSize, concurrency, leaseMs, clock, log: ctx.log });
  const timetables = [...(schedules.size > 0 ? [schedules] : []), ...modules.flatMap((m) => m.timetables?.(ctx) ?? [])];
  const scheduler = new Scheduler(ctx.database, { timetables, pollMs, batchSize, clock, log: ctx.log });
  return [{ start: () => jobs.start(), stop: () => jobs.stop() }, { start: () => scheduler.start(), stop: () => scheduler.stop() }];
}

/** Every module's jobs, each topic handled once. */
export function jobDeclarations(modules: readonly Module[]): JobDeclaration<AppContext>[] {
  const byTopic = new Map<string, JobDeclaration<AppContext>>();
  for (const job of modules.flatMap((m) => m.jobs ?? [])) {
    if (byTopic.has(job.type.topic)) throw new Error(`Job topic ${job.type.topic} is declared twice`);
    byTopic.set(job.type.topic, job);
  }
  return [...byTopic.values()];
}

/**
 * The S3-compatible store when a bucket is set (what several instances need), else the data
 * directory. The AWS SDK is imported only for S3: the filesystem store does not need its code
 * resident (docs/benchmarks.md "Memory of the embedded default").
 */
export async function openBlobStore(config: Config): Promise<BlobStore> {
  const { bucket, endpoint, region, prefix, forcePathStyle } = config.s3;
  if (bucket === undefined) return new FileBlobStore(join(config.dataDir, 'blobs'));
  const { S3BlobStore } = await import('./platform/blobs/s3.ts');
  return new S3BlobStore({ bucket, prefix, region, forcePathStyle, ...(endpoint ? { endpoint } : {}) });
}

/** Every column holding values sealed under ATRIUM_SECRET_KEY: the signing keys' and the modules' (`Module.sealed`). */
export function sealedColumns(modules: readonly Module[] = allModules): SealedColumns[] {
  return [signingKeysSealed, ...modules.flatMap((m) => m.sealed ?? [])];
}

/** Opens the database and everything that stands on it; no HTTP yet. */
export async function openContext(config: Config, log?: FastifyBaseLogger, modules: readonly Module[] = allModules): Promise<AppContext> {
  const logger = log ?? createLogger(config);
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: config.databasePoolSize, backgroundPoolSize: config.jobs.poolSize });
  try {
    const applied = await migrate(database);
    if (applied.length > 0) logger.info({ applied }, 'database migrated');
    const { current, fallbacks } = loadSecretKeys(config);
    const secrets = new SecretBox(current, fallbacks);
    const keys = new SigningKeys(database.db, secrets);
    await keys.load();
    const auth = new Auth(config.authCacheMs);
    const events = new Events(modules.flatMap((m) => m.events ?? []));
    const ctx: AppContext = {
      config,
      database,
      db: database.db,
      secrets,
      keys,
      blobs: await openBlobStore(config),
      auth,
      events,
      authority: new Authority(database.db, modules.flatMap((m) => m.resources ?? []), modules.flatMap((m) => m.tokenRoles ?? [])),
      admission: admitEveryCall,
      mail: createMailer(config.mail, database.db),
      audit: new AuditLog(database.db, events),
      log: logger,
    };
    const admissions = modules.filter((m) => m.admission);
    if (admissions.length > 1) throw new Error(`At most one module may admit paid calls; found ${admissions.length}`);
    if (admissions[0]) ctx.admission = admissions[0].admission!(ctx);
    // A consumer queuing jobs that no handler runs would only fill the queue.
    const handled = new Set(jobDeclarations(modules).map((job) => job.type));
    for (const consumer of modules.flatMap((m) => m.eventConsumers?.(ctx) ?? [])) {
      if (!handled.has(consumer.queues)) throw new Error(`Event consumer ${consumer.name} queues ${consumer.queues.topic}, which no module handles`);
      ctx.events.addConsumer(consumer);
    }
    const membershipProviders = modules.filter((m) => m.memberships);
    if (membershipProviders.length !== 1) throw new Error(`Exactly one module must provide memberships; found ${membershipProviders.length}`);
    auth.setMemberships(membershipProviders[0]!.memberships!(ctx));
    const bindings = modules.filter((m) => m.policyBindings);
    if (bindings.length > 1) throw new Error(`At most one module may keep policy bindings; found ${bindings.length}`);
    if (bindings[0]) ctx.authority.setPolicyBindings(bindings[0].policyBindings!(ctx));
    for (const verifier of modules.flatMap((m) => m.verifiers?.(ctx) ?? [])) auth.addVerifier(verifier);
    return ctx;
  } catch (error) {
    await database.close();
    throw error;
  }
}

/** How often a stopping server looks for keep-alive connections that have gone idle. */
const IDLE_REAP_MS = 50;

export interface RunningService extends BuiltApp {
  ctx: AppContext;
  url: string;
  close(): Promise<void>;
}

export interface ServiceOptions {
  log?: FastifyBaseLogger;
  /** Replaces the module list (tests of the module mechanism). */
  modules?: readonly Module[];
  /** Replaces the default background work (e.g. `() => []` to drive a worker by hand). */
  workers?: (ctx: AppContext) => Background[];
}

/**
 * Starts the HTTP server and background workers (`defaultWorkers` unless `workers` is given; none
 * with ATRIUM_JOBS_WORKER=false); `close()` drains requests, then the database.
 */
export async function startService(config: Config, options: ServiceOptions = {}): Promise<RunningService> {
  const modules = options.modules ?? allModules;
  const ctx = await openContext(config, options.log, modules);
  let built: BuiltApp;
  let workers: Background[];
  try {
    // First, so that a module's invalid schedule stops the boot before anything listens.
    workers = options.workers ? options.workers(ctx) : defaultWorkers(ctx, modules);
    built = await buildApp(ctx, modules);
    await built.app.listen({
      port: config.port,
      host: config.host,
      // The socket's address is not the URL to use: tokens, redirects and discovery all name the
      // public URL (the OAuth issuer), and a client configured with another spelling of the same
      // machine fails only at sign-in.
      listenTextResolver: (address) => `Server listening at ${address}; use ${config.publicUrl} (ATRIUM_PUBLIC_URL) everywhere: CLI, apps, OAuth clients`,
    });
  } catch (error) {
    await ctx.database.close();
    throw error;
  }
  // Built either way, so that an invalid schedule stops every instance's boot alike.
  if (config.jobs.worker) for (const worker of workers) worker.start();
  else ctx.log.info('background work is off on this instance (ATRIUM_JOBS_WORKER=false): other instances run it');
  if (config.secretKeyFallbacks.length > 0) {
    ctx.log.warn(`ATRIUM_SECRET_KEY_FALLBACKS lists ${config.secretKeyFallbacks.length} previous key(s): once \`atrium keys reencrypt\` has run, remove it (docs/operations.md, "Changing ATRIUM_SECRET_KEY")`);
  }
  ctx.keys.start(config.keys.refreshMs, (error) => ctx.log.error({ err: error }, 'signing keys refresh failed'));
  const address = built.app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  let closing: Promise<void> | undefined;
  return {
    ...built,
    ctx,
    url: `http://127.0.0.1:${port}`,
    close() {
      closing ??= (async () => {
        ctx.keys.stop();
        // The server closes the keep-alive connections that are idle when it stops listening; one
        // whose request was still in flight goes idle later, and would hold the stop until its
        // keep-alive timeout (72 s). So idle connections are closed as they appear until the drain ends.
        const draining = built.app.close();
        const reaper = setInterval(() => built.app.server.closeIdleConnections(), IDLE_REAP_MS);
        try {
          await draining;
        } finally {
          clearInterval(reaper);
        }
        await Promise.all(workers.map((w) => w.stop()));
        await ctx.database.close();
      })();
      return closing;
    },
  };
}
