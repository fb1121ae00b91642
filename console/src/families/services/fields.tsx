import type { Field } from '../../ui/FormModal.tsx';

export const SPEC_FIELDS: readonly Field[] = [
  {
    kind: 'code',
    name: 'spec',
    label: 'Spec (YAML or JSON)',
    required: true,
    description: <>A Service (<code>kind: Service</code>) or a template (<code>kind: ServiceTemplate</code>) whose <code>{'{{ variables }}'}</code> take the values below.</>,
  },
  {
    kind: 'json',
    name: 'values',
    label: 'Template values (JSON object, for a ServiceTemplate)',
    placeholder: '{ "name": "echo", "port": "8080" }',
  },
];
