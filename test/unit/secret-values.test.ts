// The values a typed secret may hold, as the console and the CLI check them before sending: a keys
// secret is a JSON object of strings, a docker one registry credentials; other types hold anything.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { secretValueProblem } from '../../src/api-client/secret-values.ts';

test('keys: a JSON object of strings, nothing else', () => {
  assert.equal(secretValueProblem('keys', '{"OPENAI_API_KEY": "sk-1", "OTHER": ""}'), undefined);
  assert.equal(secretValueProblem(' keys ', '{}'), undefined);
  for (const value of ['sk-1', '', '"sk-1"', '["a"]', 'null', '{"N": 1}', '{"A": {"b": "c"}}', '{"A": "b"']) {
    assert.match(secretValueProblem('keys', value) ?? '', /^A keys secret is a JSON object of strings/, value);
  }
});

test('docker: server, username and password as text; other types take any value', () => {
  assert.equal(secretValueProblem('docker', '{"server": "ghcr.io", "username": "u", "password": "p", "email": "e@example.test"}'), undefined);
  assert.match(secretValueProblem('docker', '{"server": "ghcr.io", "username": "u"}') ?? '', /^A docker secret is registry credentials/);
  assert.match(secretValueProblem('docker', 'hunter2') ?? '', /^A docker secret/);
  assert.equal(secretValueProblem('opaque', 'anything at all'), undefined);
  assert.equal(secretValueProblem('', 'not json'), undefined);
});
