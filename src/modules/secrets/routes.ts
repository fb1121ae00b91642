// Secrets of a project and of a room: create, list (no values), fetch one (with its value), replace,
// delete. Room secrets are addressed by id plus `for_identity` / `delegated_to`.
import type { Api } from '../../module.ts';
import type { AppContext } from '../../context.ts';
import { pageOf } from '../../platform/http/lists.ts';
import { Ok, OK, ProjectParams } from '../../platform/http/schemas.ts';
import { ACTS_IN_ROOM } from '../rooms/service.ts';
import * as schema from './schema.ts';
import * as service from './service.ts';

const tags = ['Secrets'];
const VALUE_NOTE = `The value is encrypted at rest with ATRIUM_SECRET_KEY and returned only by GET of one secret; at most ${schema.MAX_SECRET_BYTES} bytes (413 beyond).`;

export function projectSecretRoutes(app: Api, ctx: AppContext): void {
  const base = '/accounts/projects/:project_id/secrets';
  app.post(base, {
    config: { auth: { permission: 'secret_creator' } },
    schema: { tags, summary: 'Create a project secret', params: ProjectParams, body: schema.ProjectSecretBody, response: { 201: schema.SecretInfo }, description: `${VALUE_NOTE} 409 when the name is taken.` },
  }, async (request, reply) => reply.status(201).send(await service.createProjectSecret(ctx, request.params.project_id, request.body)));

  app.get(base, {
    config: { auth: { permission: 'secret_inventory' } },
    schema: { tags, summary: 'List project secrets, without values', params: ProjectParams, querystring: schema.ListQuery, response: { 200: schema.SecretList } },
  }, async (request) => service.listProjectSecrets(ctx, request.params.project_id, pageOf(request.query)));

  app.get(`${base}/:secret_id`, {
    config: { auth: { permission: 'secret_inventory' } },
    schema: { tags, summary: 'Fetch a project secret with its value', params: schema.ProjectSecretParams, response: { 200: schema.SecretWithValue } },
  }, async (request) => service.getProjectSecret(ctx, request.params.project_id, request.params.secret_id));

  app.put(`${base}/:secret_id`, {
    config: { auth: { permission: 'secret_manager' } },
    schema: { tags, summary: 'Replace a project secret', params: schema.ProjectSecretParams, body: schema.ProjectSecretBody, response: { 200: schema.SecretInfo }, description: VALUE_NOTE },
  }, async (request) => service.updateProjectSecret(ctx, request.params.project_id, request.params.secret_id, request.body));

  app.delete(`${base}/:secret_id`, {
    config: { auth: { permission: 'secret_manager' } },
    schema: { tags, summary: 'Delete a project secret', params: schema.ProjectSecretParams, response: { 200: Ok } },
  }, async (request) => {
    await service.deleteProjectSecret(ctx, request.params.project_id, request.params.secret_id);
    return OK;
  });
}

export function roomSecretRoutes(app: Api, ctx: AppContext): void {
  const base = '/accounts/projects/:project_id/rooms/:room_name/secrets';
  // A room's secrets are its participants': writing one, or reading its value, needs the caller's own access there.
  app.post(base, {
    config: { auth: { permission: 'secret_creator', within: ACTS_IN_ROOM } },
    schema: {
      tags, summary: 'Create a room secret', params: schema.RoomParams, body: schema.RoomSecretCreate, response: { 201: schema.SecretInfo },
      description: `${VALUE_NOTE} \`secret_id\` may be chosen (e.g. to give one secret a value per identity); \`name\` defaults to the id and \`type\` to "opaque". 409 when the id is taken for these identities, or the name.`,
    },
  }, async (request, reply) => reply.status(201).send(await service.createRoomSecret(ctx, ctx.authority.actorOf(request), request.params.project_id, request.params.room_name, request.body)));

  app.get(base, {
    config: { auth: { permission: 'secret_inventory' } },
    schema: { tags, summary: "List a room's secrets, without values", params: schema.RoomParams, querystring: schema.RoomListQuery, response: { 200: schema.SecretList } },
  }, async (request) => service.listRoomSecrets(ctx, request.params.project_id, request.params.room_name, { ...pageOf(request.query), forIdentity: request.query.for_identity }));

  app.get(`${base}/:secret_id`, {
    config: { auth: { permission: 'secret_inventory', within: ACTS_IN_ROOM } },
    schema: { tags, summary: 'Fetch a room secret with its value', description: 'Its value is for the room: 403 for a caller who may not connect to it.', params: schema.RoomSecretParams, querystring: schema.KeyQuery, response: { 200: schema.SecretWithValue } },
  }, async (request) => service.getRoomSecret(ctx, ctx.authority.actorOf(request), request.params.project_id, request.params.room_name, request.params.secret_id, request.query));

  app.put(`${base}/:secret_id`, {
    config: { auth: { permission: 'secret_manager', within: ACTS_IN_ROOM } },
    schema: {
      tags, summary: 'Replace a room secret', params: schema.RoomSecretParams, body: schema.RoomSecretUpdate, response: { 200: schema.SecretInfo },
      description: `${VALUE_NOTE} The body's \`for_identity\` and \`delegated_to\` pick which value of the secret is replaced; \`name\` and \`type\` are kept when left out.`,
    },
  }, async (request) => service.updateRoomSecret(ctx, ctx.authority.actorOf(request), request.params.project_id, request.params.room_name, request.params.secret_id, request.body));

  app.delete(`${base}/:secret_id`, {
    config: { auth: { permission: 'secret_manager' } },
    schema: { tags, summary: 'Delete a room secret', params: schema.RoomSecretParams, querystring: schema.KeyQuery, response: { 200: Ok } },
  }, async (request) => {
    await service.deleteRoomSecret(ctx, request.params.project_id, request.params.room_name, request.params.secret_id, request.query);
    return OK;
  });
}
