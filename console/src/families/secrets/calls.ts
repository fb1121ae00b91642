// The secrets routes of a scope: the project's (by id), or one room's (by id, for_identity and
// delegated_to). Values go in as base64 of the text typed and never come back to a page: the one
// route that returns a value (GET of one secret) is read for the secret's other fields only, and
// its `data_base64` dropped before anything keeps it.
import { ApiError, api, unwrap, type ResponseOf } from '../../api.ts';

export type Secret = ResponseOf<'/accounts/projects/{project_id}/secrets', 'get'>['secrets'][number];

/** Which value of a room secret: none for the room-wide one. */
export interface Identities {
  for_identity?: string;
  delegated_to?: string;
}

export function toBase64(text: string): string {
  let binary = '';
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary);
}

const present = (identities: Identities) => Object.fromEntries(Object.entries(identities).filter(([, value]) => value)) as Identities;

export function secretsOf(projectId: string, roomName: string | undefined) {
  const project = { project_id: projectId };
  const room = { ...project, room_name: roomName ?? '' };
  return {
    list: async (query: { offset: number; count: number; filter?: string }) => roomName === undefined
      ? unwrap(api.GET('/accounts/projects/{project_id}/secrets', { params: { path: project, query } }))
      : unwrap(api.GET('/accounts/projects/{project_id}/rooms/{room_name}/secrets', { params: { path: room, query } })),
    /** The secret without its value. */
    get: async (secretId: string, identities: Identities): Promise<Secret> => {
      const { data_base64: _value, ...secret } = roomName === undefined
        ? await unwrap(api.GET('/accounts/projects/{project_id}/secrets/{secret_id}', { params: { path: { ...project, secret_id: secretId } } }))
        : await unwrap(api.GET('/accounts/projects/{project_id}/rooms/{room_name}/secrets/{secret_id}', { params: { path: { ...room, secret_id: secretId }, query: present(identities) } }));
      return secret;
    },
    createProjectSecret: async (body: { name: string; type: string; value: string }) =>
      unwrap(api.POST('/accounts/projects/{project_id}/secrets', { params: { path: project }, body: { name: body.name, type: body.type, data_base64: toBase64(body.value) } })),
    createRoomSecret: async (body: { secret_id: string; name: string; type: string; value: string } & Identities) =>
      unwrap(api.POST('/accounts/projects/{project_id}/rooms/{room_name}/secrets', {
        params: { path: room },
        body: { data_base64: toBase64(body.value), ...present({ for_identity: body.for_identity, delegated_to: body.delegated_to }), ...(body.secret_id ? { secret_id: body.secret_id } : {}), ...(body.name ? { name: body.name } : {}), ...(body.type ? { type: body.type } : {}) },
      })),
    replace: async (secret: Secret, body: { name: string; type: string; value: string }) => roomName === undefined
      ? unwrap(api.PUT('/accounts/projects/{project_id}/secrets/{secret_id}', { params: { path: { ...project, secret_id: secret.id } }, body: { name: body.name, type: body.type, data_base64: toBase64(body.value) } }))
      : unwrap(api.PUT('/accounts/projects/{project_id}/rooms/{room_name}/secrets/{secret_id}', {
        params: { path: { ...room, secret_id: secret.id } },
        body: { data_base64: toBase64(body.value), name: body.name, type: body.type, ...present({ for_identity: secret.for_identity ?? '', delegated_to: secret.delegated_to ?? '' }) },
      })),
    remove: async (secret: Secret) => roomName === undefined
      ? unwrap(api.DELETE('/accounts/projects/{project_id}/secrets/{secret_id}', { params: { path: { ...project, secret_id: secret.id } } }))
      : unwrap(api.DELETE('/accounts/projects/{project_id}/rooms/{room_name}/secrets/{secret_id}', { params: { path: { ...room, secret_id: secret.id }, query: present({ for_identity: secret.for_identity ?? '', delegated_to: secret.delegated_to ?? '' }) } })),
  };
}

/** A taken name or id is about the name (or the id); a value too large about the value. */
export function secretErrorField(error: unknown): string | undefined {
  if (!(error instanceof ApiError)) return undefined;
  if (error.status === 413) return 'value';
  if (error.status === 409) return /^Secret "/.test(error.message) ? 'secret_id' : 'name';
  return undefined;
}

/** Where a secret's page is: room secrets carry which value in the address. */
export function secretLink(secret: Secret, inRoom: boolean): string {
  const query = new URLSearchParams(present({ for_identity: secret.for_identity ?? '', delegated_to: secret.delegated_to ?? '' }) as Record<string, string>).toString();
  return `secrets/${encodeURIComponent(secret.id)}${inRoom && query ? `?${query}` : ''}`;
}
