// Boot: config → database (migrated) → shared services → app → workers, and graceful shutdown.
import { join } from 'node:path';
import pino from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import { buildApp, type BuiltApp, type Module } from './app.ts';
import type { Config } from './config.ts';
import type { AppContext } from './context.ts';
import { FileBlobStore } from './platform/blobs/store.ts';
import { SecretBox, loadSecretKey } from './platform/crypto/secrets.ts';
import { SigningKeys } from './platform/crypto/signing-keys.ts';
import { createMailer } from './platform/mail/mailer.ts';
import { openDatabase } from './platform/db/engine.ts';
import { migrate } from './platform/db/migrate.ts';
import { Auth } from './platform/http/auth.ts';
import { JobWorker } from './platform/jobs/worker.ts';
import { apiKeyVerifier } from './modules/api-keys/service.ts';
import { memberRoles } from './modules/projects/store.ts';
import { webhookDeliveryHandler } from './modules/webhooks/delivery.ts';
import { personalAccessTokenVerifier } from './modules/users/service.ts';

export interface Background {
  start(): void;
  stop(): Promise<void>;
}

/**
 * The background work every instance runs unless told otherwise: the outbox worker, with the handler
 * of every job topic. Instances on one PostgreSQL share the jobs (SKIP LOCKED leases).
 */
export function defaultWorkers(ctx: AppContext): Background[] {
  const delivery = webhookDeliveryHandler(ctx);
  const { pollMs, batchSize, concurrency, leaseMs } = ctx.config.jobs;
  const jobs = new JobWorker(ctx.database, { handlers: [delivery], pollMs, batchSize, concurrency, leaseMs, log: ctx.log });
  return [{
    start: () => jobs.start(),
    stop: async () => {
      await jobs.stop();
      delivery.close();
    },
  }];
}

/** Opens the database and everything that stands on it; no HTTP yet. */
export async function openContext(config: Config, log?: FastifyBaseLogger): Promise<AppContext> {
  const logger = log ?? (pino({ level: config.logLevel }) as unknown as FastifyBaseLogger);
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: config.databasePoolSize, backgroundPoolSize: config.jobs.poolSize });
  try {
    const applied = await migrate(database);
    if (applied.length > 0) logger.info({ applied }, 'database migrated');
    const secrets = new SecretBox(loadSecretKey(config.secretKey, config.dataDir));
    const keys = new SigningKeys(database.db, secrets);
    await keys.load();
    const auth = new Auth(config.authCacheMs);
    auth.addVerifier(apiKeyVerifier(database.db));
    auth.addVerifier(personalAccessTokenVerifier(database.db));
    auth.setMembershipLookup((userId, projectId) => memberRoles(database.db, projectId, userId));
    return {
      config,
      database,
      db: database.db,
      secrets,
      keys,
      blobs: new FileBlobStore(join(config.dataDir, 'blobs')),
      auth,
      mail: createMailer(config.mail, database.db),
      log: logger,
    };
  } catch (error) {
    await database.close();
    throw error;
  }
}

export interface RunningService extends BuiltApp {
  ctx: AppContext;
  url: string;
  close(): Promise<void>;
}

/** Starts the HTTP server and background workers (`defaultWorkers` unless `workers` is given); `close()` drains requests, then the database. */
export async function startService(config: Config, options: { log?: FastifyBaseLogger; modules?: Module[]; workers?: (ctx: AppContext) => Background[] } = {}): Promise<RunningService> {
  const ctx = await openContext(config, options.log);
  let built: BuiltApp;
  try {
    built = await buildApp(ctx, options.modules);
    await built.app.listen({ port: config.port, host: config.host });
  } catch (error) {
    await ctx.database.close();
    throw error;
  }
  const workers = (options.workers ?? defaultWorkers)(ctx);
  for (const worker of workers) worker.start();
  const address = built.app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  let closing: Promise<void> | undefined;
  return {
    ...built,
    ctx,
    url: `http://127.0.0.1:${port}`,
    close() {
      closing ??= (async () => {
        await built.app.close();
        await Promise.all(workers.map((w) => w.stop()));
        await ctx.database.close();
      })();
      return closing;
    },
  };
}
