// Role implications, legacy flags, and the rule that a key is never given roles its creator lacks.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Db } from '../../src/platform/db/engine.ts';
import { Authority } from '../../src/platform/http/authority.ts';
import { ApiError } from '../../src/platform/http/errors.ts';
import { applyLegacyFlags, effectiveRoles, legacyFlagsOf, PROJECT_ROLES, primaryRole } from '../../src/platform/http/roles.ts';

test('admins hold every role; every role holds member and itself', () => {
  assert.deepEqual([...effectiveRoles(['admin'])].sort(), [...PROJECT_ROLES].sort());
  for (const role of PROJECT_ROLES) {
    const roles = effectiveRoles([role]);
    assert.ok(roles.has(role), role);
    assert.ok(roles.has('member'), role);
  }
  assert.deepEqual([...effectiveRoles([])], ['member']);
  assert.deepEqual([...effectiveRoles(['no-such-role'])], ['member'], 'unknown stored roles grant nothing');
  assert.equal(primaryRole(effectiveRoles(['developer'])), 'developer');
  assert.equal(primaryRole(effectiveRoles(['room_creator'])), 'member');
});

test('legacy flags: true adds, false removes, absent or null keeps', () => {
  assert.deepEqual(applyLegacyFlags(['room_creator'], { is_developer: true, can_create_rooms: false, can_create_agents: null }).sort(), ['developer']);
  assert.deepEqual(legacyFlagsOf(effectiveRoles(['developer'])), { is_admin: false, is_developer: true, can_create_rooms: true, can_create_agents: true, can_use_llm_proxy: true });
});

test('a key may only be given roles its creator holds, implications included', () => {
  const authority = new Authority({} as Db, []);
  const creator = (held: string[]) => authority.actor({ kind: 'api_key', credentialId: 'k', name: 'k' }, { projectId: 'p', roles: effectiveRoles(held) });
  const refused = (held: string[], wanted: string[] | null) =>
    assert.throws(() => authority.assertRolesWithin(creator(held), wanted as never), (e) => e instanceof ApiError && e.status === 403, `${held} → ${wanted}`);
  const allowed = (held: string[], wanted: string[] | null) => assert.doesNotThrow(() => authority.assertRolesWithin(creator(held), wanted as never), `${held} → ${wanted}`);
  allowed(['admin'], null);
  allowed(['admin'], ['developer', 'oauth_client_creator']);
  allowed(['developer'], ['room_creator', 'agent_creator']);
  allowed(['room_creator'], ['room_creator']);
  allowed(['room_creator'], ['member']);
  refused(['developer'], null);
  refused(['developer'], ['admin']);
  refused(['room_creator'], ['developer']);
  refused(['member'], ['room_creator']);
  refused(['oauth_client_inventory'], ['oauth_client_manager']);
});
