// External OAuth registrations of a scope (docs/external-oauth.md): the project's, or one room's.
// The API has no route for one registration: the list's rows carry everything. The client secret
// is write-only: typed in a password field, sent, never read back.
import { api, unwrap, type BodyOf, type ResponseOf } from '../../api.ts';
import { jsonValue, type Field } from '../../ui/FormModal.tsx';

export type Registration = ResponseOf<'/accounts/projects/{project_id}/external-oauth', 'get'>['registrations'][number];
type Input = BodyOf<'/accounts/projects/{project_id}/external-oauth', 'post'>;

export interface RegistrationValues extends Record<string, unknown> {
  client_id: string;
  client_secret: string;
  remove_secret: boolean;
  authorization_endpoint: string;
  token_endpoint: string;
  scopes: string[];
  no_pkce: boolean;
  delegated_to: string;
  connector: string;
}

const COMMON: Field[] = [
  { kind: 'text', name: 'client_id', label: 'Client id', required: true, description: 'The id the provider gave this application.' },
  { kind: 'text', name: 'authorization_endpoint', label: 'Authorization endpoint', placeholder: 'https://github.com/login/oauth/authorize' },
  { kind: 'text', name: 'token_endpoint', label: 'Token endpoint', placeholder: 'https://github.com/login/oauth/access_token', description: 'Both endpoints, or neither when a connector says where the provider is.' },
  { kind: 'tags', name: 'scopes', label: 'Scopes', placeholder: 'read:user' },
  { kind: 'switch', name: 'no_pkce', label: 'The provider does not support PKCE' },
  { kind: 'text', name: 'delegated_to', label: 'Delegated to (optional)', description: 'The participant identity it is for; empty for everyone.' },
  { kind: 'json', name: 'connector', label: 'Connector (JSON, optional)', description: '{"server_url": …, "openai_connector_id": …, "client_secret_id": …}' },
];

export const CREATE_FIELDS: Field[] = [
  ...COMMON.slice(0, 1),
  { kind: 'password', name: 'client_secret', label: 'Client secret (optional)', description: 'Stored encrypted; never shown again.' },
  ...COMMON.slice(1),
];

export const EDIT_FIELDS: Field[] = [
  ...COMMON.slice(0, 1),
  { kind: 'password', name: 'client_secret', label: 'New client secret (optional)', description: 'Empty keeps the stored one.' },
  { kind: 'switch', name: 'remove_secret', label: 'Remove the stored client secret' },
  ...COMMON.slice(1),
];

export const NEW_REGISTRATION: RegistrationValues = {
  client_id: '', client_secret: '', remove_secret: false, authorization_endpoint: '', token_endpoint: '', scopes: [], no_pkce: false, delegated_to: '', connector: '',
};

export const registrationValues = (registration: Registration): RegistrationValues => ({
  ...NEW_REGISTRATION,
  client_id: registration.client_id,
  authorization_endpoint: registration.oauth.authorization_endpoint ?? '',
  token_endpoint: registration.oauth.token_endpoint ?? '',
  scopes: registration.oauth.scopes ?? [],
  no_pkce: registration.oauth.no_pkce ?? false,
  delegated_to: registration.delegated_to,
  connector: registration.connector ? JSON.stringify(registration.connector, null, 2) : '',
});

function bodyOf(values: RegistrationValues): Input {
  const text = (value: string) => value.trim() || null;
  const secret = values.remove_secret ? '' : text(values.client_secret);
  return {
    client_id: values.client_id.trim(),
    oauth: {
      authorization_endpoint: text(values.authorization_endpoint),
      token_endpoint: text(values.token_endpoint),
      scopes: values.scopes.length > 0 ? values.scopes : null,
      no_pkce: values.no_pkce,
    },
    ...(secret !== null ? { client_secret: secret } : {}),
    delegated_to: text(values.delegated_to),
    connector: (jsonValue(values.connector) ?? null) as Input['connector'],
  };
}

/** The API names the provider's fields under oauth. and connector.: shown under the field. */
export function registrationErrorField(error: unknown): string | undefined {
  const message = error instanceof Error ? error.message.replace(/^body\./, '') : '';
  if (message.startsWith('connector')) return 'connector';
  const field = message.replace(/^oauth\.?\s*(needs both )?/, '');
  return ['authorization_endpoint', 'token_endpoint', 'client_secret', 'scopes'].find((name) => field.startsWith(name));
}

export function registrationsOf(projectId: string, roomName: string | undefined) {
  const project = { project_id: projectId };
  const room = { ...project, room_name: roomName ?? '' };
  return {
    list: async (query: { offset: number; count: number; filter?: string }) => roomName === undefined
      ? unwrap(api.GET('/accounts/projects/{project_id}/external-oauth', { params: { path: project, query } }))
      : unwrap(api.GET('/accounts/projects/{project_id}/rooms/{room_name}/external-oauth', { params: { path: room, query } })),
    create: async (values: RegistrationValues) => roomName === undefined
      ? unwrap(api.POST('/accounts/projects/{project_id}/external-oauth', { params: { path: project }, body: bodyOf(values) }))
      : unwrap(api.POST('/accounts/projects/{project_id}/rooms/{room_name}/external-oauth', { params: { path: room }, body: bodyOf(values) })),
    replace: async (id: string, values: RegistrationValues) => roomName === undefined
      ? unwrap(api.PUT('/accounts/projects/{project_id}/external-oauth/{registration_id}', { params: { path: { ...project, registration_id: id } }, body: bodyOf(values) }))
      : unwrap(api.PUT('/accounts/projects/{project_id}/rooms/{room_name}/external-oauth/{room_registration_id}', { params: { path: { ...room, room_registration_id: id } }, body: bodyOf(values) })),
    remove: async (id: string) => roomName === undefined
      ? unwrap(api.DELETE('/accounts/projects/{project_id}/external-oauth/{registration_id}', { params: { path: { ...project, registration_id: id } } }))
      : unwrap(api.DELETE('/accounts/projects/{project_id}/rooms/{room_name}/external-oauth/{room_registration_id}', { params: { path: { ...room, room_registration_id: id } } })),
  };
}
