// Values checked against their schemas the way request bodies are: closed objects refuse unknown
// properties by name, and the words match those of a refused body.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Type } from 'typebox';
import { ApiError } from '../../src/platform/http/errors.ts';
import { CLOSED } from '../../src/platform/http/schemas.ts';
import { checkerFor } from '../../src/platform/http/validation.ts';

const Spec = Type.Object({
  name: Type.String({ maxLength: 10 }),
  container: Type.Optional(Type.Object({ image: Type.String({ maxLength: 10 }), tag: Type.Optional(Type.String({ maxLength: 10, default: 'latest' })) }, CLOSED)),
}, CLOSED);

const refusal = (value: unknown): string => {
  try {
    checkerFor(Spec, 'template')(value);
  } catch (error) {
    assert.ok(error instanceof ApiError);
    assert.equal(error.status, 400);
    return error.message;
  }
  assert.fail('accepted');
};

test('a closed object names the unknown property, at any depth', () => {
  assert.equal(refusal({ name: 'a', extra: 1 }), 'template has unknown property "extra"');
  assert.equal(refusal({ name: 'a', container: { image: 'i', imgae: 'typo' } }), 'template.container has unknown property "imgae"');
});

test('other violations name the field; a valid value comes back with its defaults', () => {
  assert.equal(refusal({}), 'template.name is required');
  assert.equal(refusal({ name: 'a', container: {} }), 'template.container.image is required');
  assert.match(refusal({ name: 'x'.repeat(11) }), /^template\.name must NOT have more than 10 characters$/);
  assert.deepEqual(checkerFor(Spec, 'template')({ name: 'a', container: { image: 'i' } }), { name: 'a', container: { image: 'i', tag: 'latest' } });
});
