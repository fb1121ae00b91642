// `atrium external-oauth …` (declared in src/cli/groups.ts): the project's registrations, or a room's.
import { unwrap } from '../../api-client/client.ts';
import { arg, type Implementations, listQuery, many, need, projectOrRoom, readText, str } from '../command-kit.ts';

const COLUMNS = ['id', 'client_id', 'room_name', 'delegated_to', 'has_client_secret', 'created_at'];

export const commands = {
  async list(ctx) {
    const { project_id, room } = await projectOrRoom(ctx);
    const query = listQuery(ctx);
    const body = room === undefined
      ? await unwrap(ctx.api.GET('/accounts/projects/{project_id}/external-oauth', { params: { path: { project_id }, query } }))
      : await unwrap(ctx.api.GET('/accounts/projects/{project_id}/rooms/{room_name}/external-oauth', { params: { path: { project_id, room_name: room }, query } }));
    return { rows: body.registrations, columns: COLUMNS, data: body };
  },
  async create(ctx) {
    const secretFile = str(ctx, 'client-secret-file');
    const scopes = many(ctx, 'scope');
    const authorization = str(ctx, 'authorization-endpoint');
    const token = str(ctx, 'token-endpoint');
    const delegated = str(ctx, 'delegated-to');
    const body = {
      client_id: need(ctx, 'client-id'),
      oauth: { ...(authorization ? { authorization_endpoint: authorization } : {}), ...(token ? { token_endpoint: token } : {}), ...(scopes.length ? { scopes } : {}) },
      ...(secretFile ? { client_secret: readText(secretFile).trim() } : {}),
      ...(delegated ? { delegated_to: delegated } : {}),
    } as never;
    const { project_id, room } = await projectOrRoom(ctx);
    const created = room === undefined
      ? await unwrap(ctx.api.POST('/accounts/projects/{project_id}/external-oauth', { params: { path: { project_id } }, body }))
      : await unwrap(ctx.api.POST('/accounts/projects/{project_id}/rooms/{room_name}/external-oauth', { params: { path: { project_id, room_name: room } }, body }));
    return { record: created as Record<string, unknown> };
  },
  async delete(ctx) {
    const { project_id, room } = await projectOrRoom(ctx);
    const id = arg(ctx, 0, '<registration_id>');
    if (room === undefined) await unwrap(ctx.api.DELETE('/accounts/projects/{project_id}/external-oauth/{registration_id}', { params: { path: { project_id, registration_id: id } } }));
    else await unwrap(ctx.api.DELETE('/accounts/projects/{project_id}/rooms/{room_name}/external-oauth/{room_registration_id}', { params: { path: { project_id, room_name: room, room_registration_id: id } } }));
    return { message: `Deleted registration ${id}` };
  },
} satisfies Implementations;
