import type { ResponseOf } from '../../api.ts';
import { jsonValue, type Field } from '../../ui/FormModal.tsx';

export type Repository = ResponseOf<'/accounts/projects/{project_id}/repositories', 'get'>['repositories'][number];

export interface RepositoryValues extends Record<string, unknown> {
  name: string;
  description: string;
  annotations: string;
}

export const REPOSITORY_FIELDS: Field[] = [
  { kind: 'text', name: 'name', label: 'Name', required: true, placeholder: 'team/web-app', description: 'An OCI repository name: lower-case components joined by /.' },
  { kind: 'textarea', name: 'description', label: 'Description' },
  { kind: 'json', name: 'annotations', label: 'Annotations (JSON object of strings, optional)' },
];

export const repositoryValues = (repository: Repository): RepositoryValues => ({
  name: repository.name,
  description: repository.description,
  annotations: Object.keys(repository.annotations).length > 0 ? JSON.stringify(repository.annotations, null, 2) : '',
});

export const repositoryBody = (values: RepositoryValues) => ({
  name: values.name.trim(),
  description: values.description,
  annotations: (jsonValue(values.annotations) ?? {}) as Record<string, string>,
});
