// The registry of resource types that resource policies can name: one entry per type, with roles,
// checked when the service boots.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PolicyResourceTypes, type PolicyResourceType } from '../../src/platform/http/policy-resources.ts';

const type = (name: string, roles: Record<string, string> = { viewer: 'reads' }): PolicyResourceType => ({
  type: name, roles, readRole: 'member', manageRole: 'admin', find: async () => undefined,
});

test('types are found by name, in declaration order', () => {
  const registry = new PolicyResourceTypes([type('room'), type('feed_subscription')]);
  assert.equal(registry.get('room')?.type, 'room');
  assert.equal(registry.get('feed_subscription')?.type, 'feed_subscription');
  assert.equal(registry.get('agent'), undefined);
  assert.deepEqual(registry.all.map((t) => t.type), ['room', 'feed_subscription']);
});

test('a type declared twice, a malformed name or role, or no roles stop the boot', () => {
  assert.throws(() => new PolicyResourceTypes([type('room'), type('room')]), /declared twice/);
  for (const name of ['Room', 'room-x', '', '1room', 'x'.repeat(51)]) assert.throws(() => new PolicyResourceTypes([type(name)]), /lower-case/, name);
  assert.throws(() => new PolicyResourceTypes([type('room', {})]), /needs roles/);
  assert.throws(() => new PolicyResourceTypes([type('room', { 'Read-Only': 'x' })]), /needs roles/);
});
