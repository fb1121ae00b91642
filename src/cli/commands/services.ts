// `atrium services …` (declared in src/cli/groups.ts): the project's services, or a room's own.
import { parse } from 'yaml';
import { unwrap } from '../../api-client/client.ts';
import { arg, type Context, type Implementations, jsonOption, listQuery, need, projectOrRoom, readText, UsageError } from '../command-kit.ts';

/**
 * The body of a create or replace from --file: a ServiceSpec as it is, or a ServiceTemplate as its
 * text with --values, which the API renders (docs/services.md#templates).
 */
function specBody(ctx: Context): Record<string, unknown> {
  const path = need(ctx, 'file');
  const text = readText(path);
  let document: unknown;
  try {
    document = parse(text);
  } catch (error) {
    throw new UsageError(`${path} is not valid YAML or JSON: ${(error as Error).message}`);
  }
  if (document === null || typeof document !== 'object' || Array.isArray(document)) throw new UsageError(`${path} must hold a mapping (version: v1, kind: Service, …)`);
  const values = jsonOption<Record<string, string>>(ctx, 'values');
  if ((document as { kind?: unknown }).kind === 'ServiceTemplate') return { template: text, values: values ?? {} };
  if (values !== undefined) throw new UsageError('--values is for a ServiceTemplate: this file is not one');
  return document as Record<string, unknown>;
}

const name = (service: Record<string, unknown>) => (service.metadata as { name?: string } | undefined)?.name ?? '';

export const commands = {
  async list(ctx) {
    const { project_id, room } = await projectOrRoom(ctx);
    const query = listQuery(ctx);
    const body = room === undefined
      ? await unwrap(ctx.api.GET('/accounts/projects/{project_id}/services', { params: { path: { project_id }, query } }))
      : await unwrap(ctx.api.GET('/accounts/projects/{project_id}/rooms/{room_name}/services', { params: { path: { project_id, room_name: room }, query } }));
    const rows = body.services.map((s) => ({ id: s.id, name: name(s as Record<string, unknown>), kind: s.kind }));
    return { rows, columns: ['id', 'name', 'kind'], data: body };
  },
  async show(ctx) {
    const { project_id, room } = await projectOrRoom(ctx);
    const service_id = arg(ctx, 0, '<service_id>');
    return {
      record: room === undefined
        ? await unwrap(ctx.api.GET('/accounts/projects/{project_id}/services/{service_id}', { params: { path: { project_id, service_id } } }))
        : await unwrap(ctx.api.GET('/accounts/projects/{project_id}/rooms/{room_name}/services/{service_id}', { params: { path: { project_id, room_name: room, service_id } } })),
    };
  },
  async create(ctx) {
    const body = specBody(ctx) as never;
    const { project_id, room } = await projectOrRoom(ctx);
    return {
      record: room === undefined
        ? await unwrap(ctx.api.POST('/accounts/projects/{project_id}/services', { params: { path: { project_id } }, body }))
        : await unwrap(ctx.api.POST('/accounts/projects/{project_id}/rooms/{room_name}/services', { params: { path: { project_id, room_name: room } }, body })),
    };
  },
  async update(ctx) {
    const body = specBody(ctx) as never;
    const { project_id, room } = await projectOrRoom(ctx);
    const service_id = arg(ctx, 0, '<service_id>');
    return {
      record: room === undefined
        ? await unwrap(ctx.api.PUT('/accounts/projects/{project_id}/services/{service_id}', { params: { path: { project_id, service_id } }, body }))
        : await unwrap(ctx.api.PUT('/accounts/projects/{project_id}/rooms/{room_name}/services/{service_id}', { params: { path: { project_id, room_name: room, service_id } }, body })),
    };
  },
  async delete(ctx) {
    const { project_id, room } = await projectOrRoom(ctx);
    const service_id = arg(ctx, 0, '<service_id>');
    if (room === undefined) await unwrap(ctx.api.DELETE('/accounts/projects/{project_id}/services/{service_id}', { params: { path: { project_id, service_id } } }));
    else await unwrap(ctx.api.DELETE('/accounts/projects/{project_id}/rooms/{room_name}/services/{service_id}', { params: { path: { project_id, room_name: room, service_id } } }));
    return { message: `Deleted service ${service_id}` };
  },
} satisfies Implementations;
