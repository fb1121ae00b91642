import { secretValueProblem } from '../../../../src/api-client/secret-values.ts';
import type { Field } from '../../ui/FormModal.tsx';

export const VALUE_FIELD: Field = {
  kind: 'password',
  name: 'value',
  label: 'Value',
  required: true,
  description: 'Stored encrypted; the console never shows it again. JSON for the docker and keys types.',
  check: (value, values) => secretValueProblem(String(values.type ?? ''), String(value ?? '')) ?? null,
};

export const TYPE_FIELD = {
  kind: 'text' as const,
  name: 'type',
  label: 'Type',
  placeholder: 'keys, docker, opaque…',
  description: 'What the value holds: docker ({server, username, password, email}), keys (a JSON object of strings) or a label of your own.',
} satisfies Field;
