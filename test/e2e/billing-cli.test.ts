// `atrium billing verify` on the embedded database: ok (exit 0) while every wallet equals its
// ledger's sum; after a wallet is tampered with behind the ledger's back, exit 1 naming the project.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { after, test } from 'node:test';
import pino from 'pino';
import { sql } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';
import { openContext } from '../../src/main.ts';
import { adjust } from '../../src/modules/billing/service.ts';
import { createProject } from '../../src/modules/projects/service.ts';
import { createUser } from '../../src/modules/users/service.ts';
import { isolatedDatabase, testConfig } from '../support/service.ts';

const MAIN = resolve(import.meta.dirname, '../../src/cli/main.ts');
const database = await isolatedDatabase('pglite');
const { dataDir } = database;
after(() => database.drop());

function verify(): Promise<{ code: number | null; stdout: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, ATRIUM_DATA_DIR: dataDir, ATRIUM_LOG_LEVEL: 'warn' };
  delete env.DATABASE_URL;
  const child = spawn(process.execPath, [MAIN, 'billing', 'verify', '--json'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => { stdout += d; });
  return new Promise((done) => child.on('exit', (code) => setImmediate(() => done({ code, stdout }))));
}

test('atrium billing verify: exit 0 while the books hold, 1 naming the project once they do not', async () => {
  const log = pino({ level: 'silent' }) as unknown as FastifyBaseLogger;
  let ctx = await openContext(testConfig('pglite', dataDir), log);
  const user = await createUser(ctx.db, { email: 'cli-billing@example.test', password: 'correct horse battery', emailVerified: true });
  const project = await createProject(ctx.db, user.id, 'books');
  await adjust(ctx, project.id, 5_000_000n, 'one', 'credit');
  await adjust(ctx, project.id, -1_250_000n, 'two', 'debit');
  await ctx.database.close();

  const ok = await verify();
  assert.equal(ok.code, 0, ok.stdout);
  assert.deepEqual(JSON.parse(ok.stdout), { ok: true, mismatches: [] });

  ctx = await openContext(testConfig('pglite', dataDir), log);
  await ctx.db.execute(sql`update billing_wallets set balance_micros = balance_micros + 1 where project_id = ${project.id}::uuid`);
  await ctx.database.close();
  const bad = await verify();
  assert.equal(bad.code, 1);
  assert.deepEqual(JSON.parse(bad.stdout).mismatches, [{ project_id: project.id, wallet: '3750001', ledger: '3750000', reserved: '0', reservations: '0' }]);
});
