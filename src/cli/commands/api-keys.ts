// `atrium api-keys …` (declared in src/cli/groups.ts).
import { unwrap } from '../../api-client/client.ts';
import { arg, many, str, type Implementations } from '../command-kit.ts';

export const commands = {
  async list(ctx) {
    const filter = str(ctx, 'filter');
    const { keys } = await unwrap(ctx.api.GET('/accounts/projects/{project_id}/api-keys', { params: { path: { project_id: await ctx.project() }, query: filter ? { filter } : {} } }));
    return { rows: keys, columns: ['id', 'name', 'roles', 'created_at'], data: keys };
  },
  async create(ctx) {
    const roles = many(ctx, 'role');
    const description = str(ctx, 'description');
    return {
      record: await unwrap(ctx.api.POST('/accounts/projects/{project_id}/api-keys', {
        params: { path: { project_id: await ctx.project() } },
        body: { name: arg(ctx, 0, '<name>'), ...(roles.length ? { roles: roles as never } : {}), ...(description ? { description } : {}) },
      })),
    };
  },
  async delete(ctx) {
    await unwrap(ctx.api.DELETE('/accounts/projects/{project_id}/api-keys/{id}', { params: { path: { project_id: await ctx.project(), id: arg(ctx, 0, '<id>') } } }));
    return { message: `Deleted API key ${ctx.args[0]}` };
  },
} satisfies Implementations;
