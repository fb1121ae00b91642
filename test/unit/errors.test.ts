// The error catalogue: codes render their templates, every shorthand yields a catalogue code, and
// docs/errors.md is generated from the table; schema violations are told in words.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { ERRORS_DOC, renderErrorsDoc } from '../../scripts/errors-doc.ts';
import { Type } from 'typebox';
import { illFormedText } from '../../src/platform/http/schemas.ts';
import { checkerFor } from '../../src/platform/http/validation.ts';
import { ERROR_CATALOGUE, apiError, badRequest, conflict, forbidden, notFound, tooManyRequests, toApiError, unauthorized } from '../../src/platform/http/errors.ts';

test('templates are filled from parameters; a string is the detail', () => {
  assert.equal(notFound('Room').message, 'Room not found');
  assert.equal(notFound('Room').status, 404);
  assert.equal(apiError('weak_password', { min: 8 }).message, 'Passwords need at least 8 characters');
  assert.equal(badRequest('name is required').message, 'name is required');
  assert.equal(conflict('busy', 'in_progress').code, 'in_progress');
  assert.equal(unauthorized().headers?.['www-authenticate'], 'Bearer');
  assert.equal(forbidden().status, 403);
});

test('the one 429 carries Retry-After in whole seconds', () => {
  const error = tooManyRequests(2.2);
  assert.equal(error.status, 429);
  assert.equal(error.code, 'rate_limited');
  assert.equal(error.headers?.['retry-after'], '3');
  assert.match(error.message, /3 s/);
});

test('framework and database errors map into the catalogue; bugs do not', () => {
  assert.equal(toApiError({ code: 'FST_ERR_BAD_URL', message: 'x', statusCode: 400 })?.code, 'invalid_request');
  assert.equal(toApiError({ code: 'FST_ERR_MAX_PARAM_LENGTH', message: 'x', statusCode: 414 })?.status, 414);
  assert.equal(toApiError({ code: 'FST_ERR_CTP_BODY_TOO_LARGE', message: 'x', statusCode: 413 })?.code, 'payload_too_large');
  assert.equal(toApiError(Object.assign(new Error('dup'), { cause: { code: '23505' } }))?.code, 'already_exists');
  assert.equal(toApiError(Object.assign(new Error('nul'), { cause: { code: '22021', message: 'invalid byte sequence' } }))?.status, 400);
  assert.equal(toApiError({ statusCode: 405, message: 'no' })?.code, 'invalid_request');
  assert.equal(toApiError(new TypeError('bug')), undefined);
  for (const [code, spec] of Object.entries(ERROR_CATALOGUE)) assert.ok(spec.status >= 400 && spec.status < 600, code);
});

test('docs/errors.md is up to date', () => {
  let committed = '';
  try {
    committed = readFileSync(ERRORS_DOC, 'utf8');
  } catch {
    // missing: reported below
  }
  assert.ok(committed === renderErrorsDoc(), 'docs/errors.md is stale or missing: run `npm run docs:errors` and commit the result');
});

test('ill-formed text is found wherever it hides; well-formed text and streams pass', () => {
  assert.equal(illFormedText({ a: ['ok', { b: '\ud800' }] }, 'body'), 'body.a[1].b');
  assert.equal(illFormedText({ ['k\u0000']: 1 }, 'body'), 'body (a key)');
  assert.equal(illFormedText('a\u0000', 'query.q'), 'query.q');
  assert.equal(illFormedText({ name: 'ü🚀 名前', n: 1, ok: true, none: null }, 'body'), undefined);
  assert.equal(illFormedText(Buffer.from([0, 0xd8]), 'body'), undefined);
});

test('a request the client aborted is its own doing, not an internal error', () => {
  assert.equal(toApiError(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }))?.status, 400);
  assert.equal(toApiError(Object.assign(new Error('premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }))?.status, 400);
});

test('schema violations in words: a pattern by what it means (never the expression), formats, a union of constants', () => {
  const check = checkerFor(Type.Object({
    id: Type.Optional(Type.String({ pattern: '^[a-z]+$', 'x-pattern-means': 'must be lower-case letters' })),
    code: Type.Optional(Type.String({ pattern: '^[0-9]+$' })),
    at: Type.Optional(Type.String({ format: 'date-time' })),
    kind: Type.Optional(Type.Union([Type.Literal('a'), Type.Literal('b')])),
  }), 'body');
  const refusal = (value: unknown) => {
    try {
      check(value);
    } catch (error) {
      return (error as Error).message;
    }
    return 'accepted';
  };
  assert.equal(refusal({ id: 'A1' }), 'body.id must be lower-case letters');
  assert.equal(refusal({ code: 'x' }), 'body.code is not in the form this field takes');
  assert.equal(refusal({ at: 'yesterday' }), 'body.at must be a date and time in ISO 8601 (2025-01-31T12:00:00Z)');
  assert.equal(refusal({ kind: 'c' }), 'body.kind must be one of "a", "b"');
  assert.equal(refusal({ id: 'abc', kind: 'b' }), 'accepted');
});
