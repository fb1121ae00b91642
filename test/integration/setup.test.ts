// First-run setup: only with the token, only while no account exists, then gone, and never for an
// admin who could not sign in. (The deployment matrix walks it on PostgreSQL too.)
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { setupLink, setupToken } from '../../src/modules/setup/service.ts';
import { rowsOf } from '../../src/platform/db/rows.ts';
import { findUserById, issuePersonalAccessToken } from '../../src/modules/users/service.ts';
import { call, startTestService, type TestService } from '../support/service.ts';

describe('first-run setup [pglite]', () => {
  let service: TestService;
  before(async () => {
    service = await startTestService('pglite');
  });
  after(() => service?.stop());

  const body = (token: string, extra: Record<string, string> = {}) => ({ token, email: 'First@Example.test', password: 'a long password', first_name: 'Ada', project_name: 'First project', ...extra });

  test('the link is printed on an empty database; the wrong token is refused; the right one creates the admin and project once', async () => {
    const token = setupToken(service.ctx.config);
    assert.equal(await setupLink(service.ctx), `${service.url}/console/setup?token=${token}`);

    assert.equal((await call(service, 'POST', '/setup/check', { json: { token: 'x'.repeat(43) } })).status, 403);
    assert.equal((await call(service, 'POST', '/setup', { json: body('wrong') })).status, 403);
    assert.equal((await call(service, 'POST', '/setup/check', { json: { token } })).status, 200);
    const weak = await call(service, 'POST', '/setup', { json: body(token, { password: 'short' }) });
    assert.equal(weak.status, 400);
    assert.equal(weak.body.error.code, 'weak_password');

    const created = await call(service, 'POST', '/setup', { json: body(token) });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const { user_id: userId, project_id: projectId } = created.body;

    // An ordinary, confirmed account (its address lower-cased), admin of the new project.
    const user = await findUserById(service.ctx.db, userId);
    assert.equal(user?.email, 'first@example.test');
    assert.ok(user?.emailVerifiedAt);
    const userToken = await issuePersonalAccessToken(service.ctx.db, userId, 'test');
    const role = await call(service, 'GET', `/accounts/projects/${projectId}/role`, { token: userToken });
    assert.equal(role.body.role, 'admin');
    // The deployment's audit log names the setup, its admin and the client's address.
    const [entry] = rowsOf<{ actor_id: string; target_id: string; client_address: string }>(await service.ctx.db.execute(sql`select * from audit_log where action = 'deployment.setup'`));
    assert.deepEqual([entry?.actor_id, entry?.target_id, entry?.client_address], [userId, projectId, '127.0.0.1']);

    // Gone once an account exists, token or not.
    assert.equal(await setupLink(service.ctx), undefined);
    assert.equal((await call(service, 'POST', '/setup/check', { json: { token } })).status, 404);
    const again = await call(service, 'POST', '/setup', { json: body(token, { email: 'second@example.test' }) });
    assert.equal(again.status, 404);
  });
});

describe('first-run setup where the admin could not sign in [pglite]', () => {
  let service: TestService;
  before(async () => {
    service = await startTestService('pglite', { ATRIUM_PASSWORD_LOGIN: 'false' });
  });
  after(() => service?.stop());

  test('is refused before any account exists, naming the setting', async () => {
    const token = setupToken(service.ctx.config);
    const check = await call(service, 'POST', '/setup/check', { json: { token } });
    assert.equal(check.status, 409);
    assert.match(check.body.error.message, /ATRIUM_PASSWORD_LOGIN=false/);
    const setup = await call(service, 'POST', '/setup', { json: { token, email: 'admin@example.test', password: 'a long password', project_name: 'First project' } });
    assert.equal(setup.status, 409);
    assert.ok(await setupLink(service.ctx), 'no account was created: the setup is still open');
  });
});
