// ServiceTemplates: a ServiceSpec in YAML with declared variables and `{{ name }}` placeholders.
// The template is parsed before anything is substituted, and values replace placeholders inside the
// parsed scalars, so a value can never add YAML structure (a newline and a key of its own). A
// placeholder that is a whole unquoted scalar takes the value's scalar type (`num: {{ port }}`
// gives a number), as if the value had been written there.
import { randomBytes } from 'node:crypto';
import { Type, type Static } from 'typebox';
import { Document, parse as parseYaml, parseDocument, visit, type Scalar } from 'yaml';
import { badRequest, tooLarge } from '../../platform/http/errors.ts';
import { isDnsName } from '../../platform/http/dns-names.ts';
import { CLOSED, Description, StringMap } from '../../platform/http/schemas.ts';
import { checkerFor } from '../../platform/http/validation.ts';
import { ServiceSpec, type ServiceSpecInput } from './schema.ts';

/** What obscure values read as wherever a service is shown rather than run. */
export const OBSCURED = '********';

/** Longest spec, as JSON, that a service may have. */
export const MAX_SPEC_CHARACTERS = 256 * 1024;

const VARIABLE_NAME = '^[A-Za-z_][A-Za-z0-9_]*$';

const Variable = Type.Object({
  name: Type.String({ pattern: VARIABLE_NAME, 'x-pattern-means': 'must start with a letter or "_" and hold only letters, digits and "_"', maxLength: 100 }),
  title: Type.Optional(Type.Union([Type.String({ maxLength: 200 }), Type.Null()])),
  description: Type.Optional(Type.Union([Description, Type.Null()])),
  obscure: Type.Optional(Type.Boolean({ description: 'A secret: shown as "********" except to room servers' })),
  enum: Type.Optional(Type.Union([Type.Array(Type.String({ maxLength: 4000 }), { minItems: 1, maxItems: 100 }), Type.Null()])),
  optional: Type.Optional(Type.Boolean()),
  type: Type.Optional(Type.Union([Type.Literal('email'), Type.Literal('route'), Type.Null()])),
  annotations: Type.Optional(Type.Union([StringMap, Type.Null()])),
}, CLOSED);

/** The template's own fields; the rest is the ServiceSpec it renders to (checked afterwards). */
const TemplateHead = Type.Object({
  version: Type.Literal('v1'),
  kind: Type.Literal('ServiceTemplate'),
  variables: Type.Optional(Type.Union([Type.Array(Variable, { maxItems: 100 }), Type.Null()])),
}, { additionalProperties: true });

const checkHead = checkerFor(TemplateHead, 'template');
const checkSpec = checkerFor(ServiceSpec, 'template');

const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;
// Jinja statements, comments and expressions other than a bare name are not supported.
const OTHER_SYNTAX = /\{%|\{#|\{\{(?!\s*[A-Za-z_][A-Za-z0-9_]*\s*\}\})/;
const EMAIL = /^[^@\s]{1,64}@[^@\s]{1,255}$/;

export interface RenderedTemplate {
  /** The spec to run: every value in place. */
  spec: ServiceSpecInput;
  /** The spec to show: obscure values replaced by OBSCURED (the same as `spec` when none). */
  shown: ServiceSpecInput;
  /** Whether `shown` hides something. */
  obscured: boolean;
}

interface Placeholders {
  /** The template with each placeholder replaced by a unique token that YAML reads as plain text. */
  text: string;
  /** The variable each token stands for. */
  tokens: Map<string, string>;
  tokenPattern: RegExp;
}

function tokenize(template: string): Placeholders {
  const nonce = randomBytes(6).toString('hex');
  const tokens = new Map<string, string>();
  const text = template.replace(PLACEHOLDER, (_match, name: string) => {
    const token = `__atrium_${nonce}_${tokens.size}__`;
    tokens.set(token, name);
    return token;
  });
  return { text, tokens, tokenPattern: new RegExp(`__atrium_${nonce}_\\d+__`, 'g') };
}

function lineOf(template: string, index: number): number {
  return template.slice(0, index).split('\n').length;
}

function checkValues(variables: readonly Static<typeof Variable>[], values: Readonly<Record<string, string>>, used: ReadonlySet<string>): void {
  const declared = new Map(variables.map((v) => [v.name, v]));
  for (const name of used) {
    if (!declared.has(name)) throw badRequest(`template uses {{ ${name} }} but declares no variable ${JSON.stringify(name)}`);
  }
  for (const name of Object.keys(values)) {
    if (!declared.has(name)) throw badRequest(`values.${name}: the template declares no variable ${JSON.stringify(name)}${declared.size > 0 ? ` (it declares ${[...declared.keys()].join(', ')})` : ''}`);
  }
  for (const variable of variables) {
    const value = values[variable.name];
    if (value === undefined || value === '') {
      if (!variable.optional) throw badRequest(`values.${variable.name} is required: the template's variable ${JSON.stringify(variable.name)} is not optional`);
      continue;
    }
    // Obscure values stay out of messages: the rule is named, never the value.
    if (variable.enum && !variable.enum.includes(value)) {
      throw badRequest(`values.${variable.name} must be one of the template's choices${variable.obscure ? '' : `: ${variable.enum.map((v) => JSON.stringify(v)).join(', ')}`}`);
    }
    if (variable.type === 'email' && !EMAIL.test(value)) throw badRequest(`values.${variable.name} must be an email address`);
    if (variable.type === 'route' && !isDnsName(value)) throw badRequest(`values.${variable.name} must be a lower-case DNS name`);
  }
}

/** The scalar a whole plain placeholder stands for: a number, boolean or null as YAML reads it, else the text. */
function typedScalar(value: string): unknown {
  if (value === '') return null;
  try {
    const parsed: unknown = parseYaml(value);
    return parsed === null || ['number', 'boolean'].includes(typeof parsed) ? parsed : value;
  } catch {
    return value;
  }
}

/** The document as plain values; aliases that expand too far (a "billion laughs") are refused. */
function toJs(doc: Document): unknown {
  try {
    return doc.toJS({ maxAliasCount: 100 });
  } catch (error) {
    throw badRequest(`template is not valid YAML: ${(error as Error).message}`);
  }
}

/** The template's document with every placeholder token replaced; `typed` re-types whole plain placeholders. */
function substitute(doc: Document, placeholders: Placeholders, valueOf: (name: string) => { text: string; typed: boolean }): unknown {
  const copy = doc.clone();
  visit(copy, {
    Scalar(_key, node: Scalar) {
      if (typeof node.value !== 'string' || !node.value.includes('__atrium_')) return;
      const whole = placeholders.tokens.get(node.value);
      if (whole !== undefined && node.type === 'PLAIN') {
        const { text, typed } = valueOf(whole);
        node.value = typed ? typedScalar(text) : text;
        return;
      }
      node.value = node.value.replace(placeholders.tokenPattern, (token) => valueOf(placeholders.tokens.get(token)!).text);
    },
  });
  return toJs(copy);
}

/** The ServiceSpec a template renders to with these values; 400 naming what is wrong. */
export function renderTemplate(template: string, values: Readonly<Record<string, string>>): RenderedTemplate {
  const other = OTHER_SYNTAX.exec(template);
  if (other) throw badRequest(`template line ${lineOf(template, other.index)}: only {{ name }} placeholders are supported`);
  const placeholders = tokenize(template);
  const doc = parseDocument(placeholders.text, { prettyErrors: false, uniqueKeys: true });
  // Parser messages quote the template around the error, never a value (none is in place yet).
  if (doc.errors.length > 0) throw badRequest(`template is not valid YAML: ${doc.errors[0]!.message.replace(placeholders.tokenPattern, '{{ … }}')}`);
  const raw = toJs(doc);
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw badRequest('template must be a YAML mapping (version: v1, kind: ServiceTemplate, …)');
  const head = checkHead(raw);
  if (JSON.stringify(head.variables ?? null).includes('__atrium_')) throw badRequest('template variables may not contain placeholders');
  const variables = head.variables ?? [];
  const names = new Set(variables.map((v) => v.name));
  if (names.size !== variables.length) throw badRequest('template declares a variable twice');
  const used = new Set(placeholders.tokens.values());
  checkValues(variables, values, used);

  // Placeholders may repeat: bound what they expand to before building it.
  const expanded = template.length + [...placeholders.tokens.values()].reduce((sum, name) => sum + (values[name]?.length ?? 0), 0);
  if (expanded > MAX_SPEC_CHARACTERS) throw tooLarge(`The rendered template would exceed ${MAX_SPEC_CHARACTERS} characters`);

  const obscure = new Set(variables.filter((v) => v.obscure && values[v.name]).map((v) => v.name));
  const toSpec = (rendered: unknown): unknown => {
    const { variables: _variables, ...rest } = rendered as Record<string, unknown>;
    return { ...rest, kind: 'Service' };
  };
  const spec = checkSpec(toSpec(substitute(doc, placeholders, (name) => ({ text: values[name] ?? '', typed: true }))));
  const obscured = [...used].some((name) => obscure.has(name));
  const shown = obscured
    ? toSpec(substitute(doc, placeholders, (name) => (obscure.has(name) ? { text: OBSCURED, typed: false } : { text: values[name] ?? '', typed: true }))) as ServiceSpecInput
    : spec;
  return { spec, shown, obscured };
}
