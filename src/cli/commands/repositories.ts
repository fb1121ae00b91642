// `atrium repositories …` (declared in src/cli/groups.ts): a repository is named by its id or name.
import { unwrap } from '../../api-client/client.ts';
import { arg, flag, idOf, str, type Context, type Implementations } from '../command-kit.ts';

async function repository(ctx: Context) {
  const project_id = await ctx.project();
  const repository_id = await idOf('repository', arg(ctx, 0, '<repository>'), async (name) => (await unwrap(ctx.api.GET('/accounts/projects/{project_id}/repositories', { params: { path: { project_id }, query: { filter: name, count: 1000 } } }))).repositories);
  return { project_id, repository_id };
}

export const commands = {
  async list(ctx) {
    const filter = str(ctx, 'filter');
    const body = await unwrap(ctx.api.GET('/accounts/projects/{project_id}/repositories', { params: { path: { project_id: await ctx.project() }, query: { count: 1000, ...(filter ? { filter } : {}) } } }));
    return { rows: body.repositories, columns: ['id', 'name', 'registry_name', 'created_at'], data: body };
  },
  async create(ctx) {
    const description = str(ctx, 'description');
    return { record: await unwrap(ctx.api.POST('/accounts/projects/{project_id}/repositories', { params: { path: { project_id: await ctx.project() } }, body: { name: arg(ctx, 0, '<name>'), ...(description ? { description } : {}) } })) };
  },
  async delete(ctx) {
    await unwrap(ctx.api.DELETE('/accounts/projects/{project_id}/repositories/{repository_id}', { params: { path: await repository(ctx) } }));
    return { message: `Deleted repository ${ctx.args[0]}` };
  },
  async token(ctx) {
    const body = { actions: flag(ctx, 'push') ? ['pull', 'push'] : ['pull'] } as never;
    return { record: await unwrap(ctx.api.POST('/accounts/projects/{project_id}/repositories/{repository_id}/token', { params: { path: await repository(ctx) }, body })) };
  },
} satisfies Implementations;
