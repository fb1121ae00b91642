// `atrium routes …` (declared in src/cli/groups.ts): a RouteSpec from a YAML or JSON file.
import { parse } from 'yaml';
import { unwrap } from '../../api-client/client.ts';
import { arg, need, readText, str, UsageError, type Context, type Implementations } from '../command-kit.ts';

function spec(ctx: Context): Record<string, unknown> {
  const path = need(ctx, 'file');
  let document: unknown;
  try {
    document = parse(readText(path));
  } catch (error) {
    throw new UsageError(`${path} is not valid YAML or JSON: ${(error as Error).message}`);
  }
  if (document === null || typeof document !== 'object' || Array.isArray(document)) throw new UsageError(`${path} must hold a mapping (version: v1, kind: Route, …)`);
  return document as Record<string, unknown>;
}

const byDomain = async (ctx: Context) => ({ project_id: await ctx.project(), domain: arg(ctx, 0, '<domain>') });
const COLUMNS = ['domain', 'room_name', 'agent_name', 'port', 'updated_at'];

export const commands = {
  async list(ctx) {
    const filter = str(ctx, 'filter');
    const body = await unwrap(ctx.api.GET('/accounts/projects/{project_id}/routes', { params: { path: { project_id: await ctx.project() }, query: { count: 1000, ...(filter ? { filter } : {}) } } }));
    return { rows: body.routes, columns: COLUMNS, data: body };
  },
  async show(ctx) {
    return { record: (await unwrap(ctx.api.GET('/accounts/projects/{project_id}/routes/{domain}', { params: { path: await byDomain(ctx) } }))).route };
  },
  async create(ctx) {
    const body = { spec: spec(ctx) } as never;
    return { record: (await unwrap(ctx.api.POST('/accounts/projects/{project_id}/routes', { params: { path: { project_id: await ctx.project() } }, body }))).route, keys: COLUMNS };
  },
  async update(ctx) {
    const body = { spec: spec(ctx) } as never;
    return { record: (await unwrap(ctx.api.PUT('/accounts/projects/{project_id}/routes/{domain}', { params: { path: await byDomain(ctx) }, body }))).route, keys: COLUMNS };
  },
  async delete(ctx) {
    await unwrap(ctx.api.DELETE('/accounts/projects/{project_id}/routes/{domain}', { params: { path: await byDomain(ctx) } }));
    return { message: `Deleted the route of ${ctx.args[0]}` };
  },
} satisfies Implementations;
