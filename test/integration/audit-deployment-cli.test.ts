// `atrium audit deployment` on both engines: the deployment's own entries (no project), read from
// the server's database with its settings, where the server runs (the embedded one once it has
// stopped), filtered as a project's listing is, as a table, JSON or JSON Lines; a project's entries
// never among them.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { GROUPS, runGroup } from '../../src/cli/groups.ts';
import { operatorActor } from '../../src/cli/operator.ts';
import { createSecondFactors, createUser } from '../../src/modules/users/service.ts';
import { EMAIL_LOGIN_ENV } from '../support/oauth.ts';
import { call, createTenant, forEachEngine, isolatedDatabase, startTestService, TEST_SECRET_KEY, type IsolatedDatabase } from '../support/service.ts';

const audit = GROUPS.find((g) => g.name === 'audit')!;

forEachEngine('atrium audit deployment', (engine) => {
  let database: IsolatedDatabase;
  let env: Record<string, string>;
  let operatorUser: string;
  let projectId: string;
  const since = new Date(Date.now() - 1000).toISOString();

  before(async () => {
    database = await isolatedDatabase(engine);
    env = { ...EMAIL_LOGIN_ENV, ...database.env, ...(engine === 'postgres' ? { ATRIUM_SECRET_KEY: TEST_SECRET_KEY } : {}), ATRIUM_LOG_LEVEL: 'warn' };
    const service = await startTestService(engine, env);
    try {
      const tenant = await createTenant(service, 'deployment');
      projectId = tenant.projectId;
      assert.equal((await call(service, 'POST', `/accounts/projects/${projectId}/rooms`, { token: tenant.apiKey, json: { name: 'project-entry' } })).status, 201);
      for (const label of ['first', 'second']) {
        const user = await createUser(service.ctx.db, { email: `${label}-${projectId}@example.test`, password: 'a long enough password', emailVerified: true });
        await createSecondFactors(service.ctx).resetAll(user.email, operatorActor());
        if (label === 'first') operatorUser = user.id;
      }
      await service.ctx.audit.flush();
    } finally {
      await service.stop();
    }
  });
  after(() => database?.drop());

  async function atrium(args: string[]) {
    let out = '';
    let err = '';
    const code = await runGroup(audit, args, { out: { write: (t: string) => (out += t) }, err: { write: (t: string) => (err += t) }, env });
    return { code, out, err };
  }

  test('lists the deployment\'s entries, newest first, with the filters and --jsonl; none of a project\'s', async () => {
    const all = await atrium(['deployment', '--since', since, '--limit', '0', '--jsonl']);
    assert.equal(all.code, 0, all.err);
    const entries = all.out.trim().split('\n').map((line) => JSON.parse(line) as { project_id: string | null; action: string; target: { id: string }; actor: { type: string } });
    assert.ok(entries.length >= 2);
    assert.ok(entries.every((e) => e.project_id === null), 'only the deployment\'s own');
    assert.ok(!entries.some((e) => e.action === 'room.create'));
    const resets = entries.filter((e) => e.action === 'second_factor.reset');
    assert.equal(resets.length, 2);
    assert.equal(resets[1]!.target.id, operatorUser, 'newest first');

    const filtered = await atrium(['deployment', '--action', 'second_factor.*', '--target', operatorUser, '--outcome', 'succeeded', '--since', since, '--json']);
    assert.equal(filtered.code, 0, filtered.err);
    const one = JSON.parse(filtered.out) as { action: string; actor: { type: string } }[];
    assert.deepEqual(one.map((e) => [e.action, e.actor.type]), [['second_factor.reset', 'operator']]);
    assert.equal(JSON.parse((await atrium(['deployment', '--action', 'second_factor.*', '--since', since, '--limit', '1', '--json'])).out).length, 1);
    assert.equal(JSON.parse((await atrium(['deployment', '--since', since, '--until', since, '--json'])).out).length, 0);
    const table = await atrium(['deployment', '--action', 'second_factor.reset', '--since', since]);
    assert.match(table.out, /second_factor\.reset/);
  });

  test('refuses what the project listing refuses, and takes neither --server nor --project', async () => {
    assert.equal((await atrium(['deployment', '--outcome', 'maybe'])).code, 2);
    assert.equal((await atrium(['deployment', '--since', 'yesterday'])).code, 2);
    assert.equal((await atrium(['deployment', '--limit', '-1'])).code, 2);
    assert.equal((await atrium(['deployment', '--project', projectId])).code, 2);
    assert.equal((await atrium(['deployment', '--server', 'http://127.0.0.1:9'])).code, 2);
  });
});
