// `atrium secrets …` (declared in src/cli/groups.ts): the project's secrets, or a room's. A value is
// read from a file or standard input (a command line shows in process lists) and sent as base64;
// it is never printed.
import { unwrap } from '../../api-client/client.ts';
import { secretValueProblem } from '../../api-client/secret-values.ts';
import { arg, type Context, type Implementations, listQuery, need, projectOrRoom, readText, str, UsageError } from '../command-kit.ts';

/** The value of --value-file, checked against the secret's type. */
function value(ctx: Context, type: string): string {
  const text = readText(need(ctx, 'value-file')).replace(/\r?\n$/, '');
  const problem = secretValueProblem(type, text);
  if (problem) throw new UsageError(problem);
  return Buffer.from(text).toString('base64');
}

/** Which value of a room secret: the room's own, or a participant's (and its delegate's). */
function identities(ctx: Context) {
  const forIdentity = str(ctx, 'for-identity');
  const delegated = str(ctx, 'delegated-to');
  return { ...(forIdentity ? { for_identity: forIdentity } : {}), ...(delegated ? { delegated_to: delegated } : {}) };
}

export const commands = {
  async list(ctx) {
    const { project_id, room } = await projectOrRoom(ctx);
    const query = listQuery(ctx);
    const body = room === undefined
      ? await unwrap(ctx.api.GET('/accounts/projects/{project_id}/secrets', { params: { path: { project_id }, query } }))
      : await unwrap(ctx.api.GET('/accounts/projects/{project_id}/rooms/{room_name}/secrets', { params: { path: { project_id, room_name: room }, query } }));
    return { rows: body.secrets, columns: ['id', 'name', 'type', 'for_identity', 'delegated_to'], data: body };
  },
  async create(ctx) {
    const name = arg(ctx, 0, '<name>');
    const type = str(ctx, 'type') ?? 'keys';
    const data_base64 = value(ctx, type);
    const { project_id, room } = await projectOrRoom(ctx);
    const created = room === undefined
      ? await unwrap(ctx.api.POST('/accounts/projects/{project_id}/secrets', { params: { path: { project_id } }, body: { name, type, data_base64 } }))
      : await unwrap(ctx.api.POST('/accounts/projects/{project_id}/rooms/{room_name}/secrets', { params: { path: { project_id, room_name: room } }, body: { name, type, data_base64, ...identities(ctx) } }));
    return { message: `Created secret ${name} (${created.id})`, data: created };
  },
  async update(ctx) {
    const secret_id = arg(ctx, 0, '<secret_id>');
    const { project_id, room } = await projectOrRoom(ctx);
    if (room === undefined) {
      const current = await unwrap(ctx.api.GET('/accounts/projects/{project_id}/secrets/{secret_id}', { params: { path: { project_id, secret_id } } }));
      const type = str(ctx, 'type') ?? current.type;
      await unwrap(ctx.api.PUT('/accounts/projects/{project_id}/secrets/{secret_id}', { params: { path: { project_id, secret_id } }, body: { name: current.name, type, data_base64: value(ctx, type) } }));
    } else {
      const type = str(ctx, 'type');
      await unwrap(ctx.api.PUT('/accounts/projects/{project_id}/rooms/{room_name}/secrets/{secret_id}', {
        params: { path: { project_id, room_name: room, secret_id } },
        body: { data_base64: value(ctx, type ?? ''), ...(type ? { type } : {}), ...identities(ctx) },
      }));
    }
    return { message: `Replaced the value of secret ${secret_id}` };
  },
  async delete(ctx) {
    const secret_id = arg(ctx, 0, '<secret_id>');
    const { project_id, room } = await projectOrRoom(ctx);
    if (room === undefined) await unwrap(ctx.api.DELETE('/accounts/projects/{project_id}/secrets/{secret_id}', { params: { path: { project_id, secret_id } } }));
    else await unwrap(ctx.api.DELETE('/accounts/projects/{project_id}/rooms/{room_name}/secrets/{secret_id}', { params: { path: { project_id, room_name: room, secret_id }, query: identities(ctx) } }));
    return { message: `Deleted secret ${secret_id}` };
  },
} satisfies Implementations;
