// Profiles: `GET|PUT /accounts/profiles/{user_id}` with `me`, and who may read whose profile.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { call, createTenant, createUserWithToken, forEachEngine, startTestService, type TestService } from '../support/service.ts';

forEachEngine('profiles', (engine) => {
  let service: TestService;
  before(async () => {
    service = await startTestService(engine);
  });
  after(() => service?.stop());

  const profile = (id: string) => `/accounts/profiles/${id}`;
  const addMember = async (projectId: string, apiKey: string, userId: string, roles: string[]) => {
    const r = await call(service, 'POST', `/accounts/projects/${projectId}/users`, { token: apiKey, json: { user_id: userId, roles } });
    assert.equal(r.status, 200);
  };

  test('read and update your own profile, by `me` and by id', async () => {
    const u = await createUserWithToken(service, 'self');
    const me = await call(service, 'GET', profile('me'), { token: u.token });
    assert.equal(me.status, 200);
    assert.deepEqual(me.body, { id: u.userId, email: u.email, first_name: '', last_name: '' });

    const put = await call(service, 'PUT', profile('me'), { token: u.token, json: { first_name: 'Ada', last_name: 'Lovelace' } });
    assert.equal(put.status, 200);
    assert.deepEqual(put.body, { ok: true });
    assert.deepEqual((await call(service, 'GET', profile(u.userId), { token: u.token })).body, { id: u.userId, email: u.email, first_name: 'Ada', last_name: 'Lovelace' });

    // Partial update keeps the other field.
    assert.equal((await call(service, 'PUT', profile(u.userId), { token: u.token, json: { last_name: 'King' } })).status, 200);
    const after = (await call(service, 'GET', profile('me'), { token: u.token })).body;
    assert.equal(after.first_name, 'Ada');
    assert.equal(after.last_name, 'King');
    // Unicode is kept as written.
    assert.equal((await call(service, 'PUT', profile('me'), { token: u.token, json: { first_name: 'Zoë 李' } })).status, 200);
    assert.equal((await call(service, 'GET', profile('me'), { token: u.token })).body.first_name, 'Zoë 李');
    assert.equal((await call(service, 'GET', profile('me'))).status, 401);
  });

  test("another user's profile is 404 unless you administer or develop a project they are in", async () => {
    const t = await createTenant(service, 'viewer');
    const stranger = await createUserWithToken(service, 'stranger');
    const colleague = await createUserWithToken(service, 'colleague');
    const dev = await createUserWithToken(service, 'dev');
    const plain = await createUserWithToken(service, 'plain');

    for (const token of [t.userToken, dev.token, plain.token]) {
      const r = await call(service, 'GET', profile(stranger.userId), { token });
      assert.equal(r.status, 404);
      assert.equal(r.body.error.code, 'not_found');
    }
    await addMember(t.projectId, t.apiKey, colleague.userId, ['member']);
    await addMember(t.projectId, t.apiKey, dev.userId, ['developer']);
    await addMember(t.projectId, t.apiKey, plain.userId, ['member']);

    // Admin and developer of a shared project may read; a plain member may not.
    assert.equal((await call(service, 'GET', profile(colleague.userId), { token: t.userToken })).body.email, colleague.email);
    assert.equal((await call(service, 'GET', profile(colleague.userId), { token: dev.token })).body.email, colleague.email);
    assert.equal((await call(service, 'GET', profile(colleague.userId), { token: plain.token })).status, 404);
    // Sharing a project with a member does not reveal strangers.
    assert.equal((await call(service, 'GET', profile(stranger.userId), { token: dev.token })).status, 404);
    // Unknown and malformed ids are 404 too.
    assert.equal((await call(service, 'GET', profile(randomUUID()), { token: t.userToken })).status, 404);
    assert.equal((await call(service, 'GET', profile('not-a-uuid'), { token: t.userToken })).status, 404);
  });

  test('an API key reads profiles of members of its project only', async () => {
    const t = await createTenant(service, 'key-reader');
    const colleague = await createUserWithToken(service, 'kcolleague');
    const stranger = await createUserWithToken(service, 'kstranger');
    await addMember(t.projectId, t.apiKey, colleague.userId, ['member']);
    const got = await call(service, 'GET', profile(colleague.userId), { token: t.apiKey });
    assert.equal(got.status, 200);
    assert.deepEqual(got.body, { id: colleague.userId, email: colleague.email, first_name: '', last_name: '' });
    assert.equal((await call(service, 'GET', profile(t.userId), { token: t.apiKey })).status, 200);
    assert.equal((await call(service, 'GET', profile(stranger.userId), { token: t.apiKey })).status, 404);
    // An API key is not a user: `me` names nobody.
    assert.equal((await call(service, 'GET', profile('me'), { token: t.apiKey })).status, 404);
    // Once removed from the project, the user is invisible to the key again.
    await call(service, 'DELETE', `/accounts/projects/${t.projectId}/users/${colleague.userId}`, { token: t.apiKey });
    assert.equal((await call(service, 'GET', profile(colleague.userId), { token: t.apiKey })).status, 404);
  });

  test("nobody else may change a profile", async () => {
    const t = await createTenant(service, 'writer');
    const colleague = await createUserWithToken(service, 'wcolleague');
    await addMember(t.projectId, t.apiKey, colleague.userId, ['member']);
    const byAdmin = await call(service, 'PUT', profile(colleague.userId), { token: t.userToken, json: { first_name: 'Hacked' } });
    assert.equal(byAdmin.status, 403);
    assert.equal(byAdmin.body.error.code, 'forbidden');
    const byKey = await call(service, 'PUT', profile(colleague.userId), { token: t.apiKey, json: { first_name: 'Hacked' } });
    assert.equal(byKey.status, 403);
    assert.equal((await call(service, 'PUT', profile('me'), { token: t.apiKey, json: { first_name: 'Hacked' } })).status, 403);
    assert.equal((await call(service, 'GET', profile('me'), { token: colleague.token })).body.first_name, '');
  });

  test('bad input is a 4xx naming the problem, and writes nothing', async () => {
    const u = await createUserWithToken(service, 'bad');
    await call(service, 'PUT', profile('me'), { token: u.token, json: { first_name: 'Kept', last_name: 'Name' } });
    const cases: [unknown, number, RegExp][] = [
      ['{"first_name":', 400, /JSON/i],
      ['[]', 400, /object/],
      ['"Ada"', 400, /object/],
      [{ first_name: 42 }, 400, /first_name/],
      [{ last_name: null }, 400, /last_name/],
      [{ first_name: 'x'.repeat(201) }, 400, /first_name/],
      [{ first_name: 'a\u0000b' }, 400, /./],
      [{ first_name: 'x'.repeat(1024 * 1024 + 1) }, 413, /./],
    ];
    for (const [json, status, message] of cases) {
      const r = await call(service, 'PUT', profile('me'), { token: u.token, json });
      assert.equal(r.status, status, JSON.stringify(json).slice(0, 80));
      assert.match(r.body.error.message, message);
    }
    const kept = (await call(service, 'GET', profile('me'), { token: u.token })).body;
    assert.deepEqual([kept.first_name, kept.last_name], ['Kept', 'Name']);
    assert.equal((await call(service, 'GET', profile('x'.repeat(65)), { token: u.token })).status, 400);
    assert.equal((await call(service, 'PUT', profile('not-a-uuid'), { token: u.token, json: {} })).status, 404);
  });
});
