// How values are checked against their TypeBox schemas: the validators of every route's params,
// query and body, and the same check for a value that arrives inside another (the service spec a
// YAML template renders to), so that both refuse the same things in the same words.
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { Static, TSchema } from 'typebox';
import { badRequest, describeViolations, type SchemaViolation } from './errors.ts';

/**
 * Query strings and path params arrive as text and are coerced; JSON bodies must have the right
 * types. Unknown properties are dropped where an object says `additionalProperties: false` and
 * refused (400 naming them) where it says `additionalProperties: never`.
 */
export function ajvFor(coerce: boolean): Ajv {
  // verbose: a violation carries the schema it broke, whose words a refusal uses (describeViolation).
  const ajv = new Ajv({ coerceTypes: coerce ? 'array' : false, useDefaults: true, removeAdditional: true, allErrors: false, strict: false, verbose: true });
  addFormats.default(ajv);
  return ajv;
}

const valueAjv = ajvFor(false);

/**
 * A check of values against `schema` as a JSON body is checked: returns the value (defaults
 * applied) or throws a 400 naming the first violation, under `where`.
 */
export function checkerFor<S extends TSchema>(schema: S, where: string): (value: unknown) => Static<S> {
  let validate: ValidateFunction | undefined;
  return (value) => {
    validate ??= valueAjv.compile(schema);
    if (validate(value)) return value as Static<S>;
    throw badRequest(describeViolations(validate.errors as SchemaViolation[], where));
  };
}
