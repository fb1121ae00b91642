import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { rowsOf } from '../../src/platform/db/rows.ts';
import { call, createTenant, forEachEngine, startTestService, type Tenant, type TestService } from '../support/service.ts';

forEachEngine('audit log', (engine) => {
  let service: TestService;
  let a: Tenant;
  before(async () => {
    service = await startTestService(engine);
    a = await createTenant(service, 'audit');
  });
  after(() => service?.stop());

  test('a created room leaves one entry', async () => {
    const r = await call(service, 'POST', `/accounts/projects/${a.projectId}/rooms`, { token: a.apiKey, json: { name: 'audited-room' } });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const rows = rowsOf<Record<string, unknown>>(await service.ctx.db.execute(sql`select * from audit_log where project_id = ${a.projectId}`));
    console.log(rows);
    assert.equal(rows.length, 1);
  });
});
