// The route-declaration rules of the auth hook, including routes that take their project from the
// credential (protocol endpoints such as OTLP, whose paths a standard client fixes).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { validateAuthRequirement, type AuthRequirement } from '../../src/platform/http/auth.ts';

const check = (url: string, auth: AuthRequirement) => validateAuthRequirement({ method: 'POST', url, config: { auth } });

test('a project role needs :project_id, unless the project comes from an API key', () => {
  assert.equal(check('/accounts/projects/:project_id/sessions', { permission: 'room_server' }), undefined);
  assert.match(check('/otlp/v1/traces', { permission: 'room_server' })!, /no :project_id/);
  assert.equal(check('/otlp/v1/traces', { permission: 'room_server', credentials: ['api_key'], project: 'credential' }), undefined);
});

test('only API keys name one project: other credentials cannot take the project from the credential', () => {
  assert.match(check('/otlp/v1/traces', { permission: 'room_server', project: 'credential' })!, /only API keys/);
  assert.match(check('/otlp/v1/traces', { permission: 'room_server', credentials: ['api_key', 'user'], project: 'credential' })!, /only API keys/);
  assert.match(check('/accounts/projects/:project_id/x', { permission: 'room_server', credentials: ['api_key'], project: 'credential' })!, /and from the path/);
  assert.match(check('/otlp/v1/traces', { permission: 'authenticated', credentials: ['api_key'], project: 'credential' })!, /no project role/);
});
