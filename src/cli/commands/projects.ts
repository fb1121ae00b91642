// `atrium projects …` (declared in src/cli/groups.ts).
import { unwrap } from '../../api-client/client.ts';
import { arg, type Implementations } from '../command-kit.ts';

export const commands = {
  async list({ api }) {
    const { projects } = await unwrap(api.GET('/accounts/projects'));
    return { rows: projects, columns: ['id', 'name', 'enabled', 'created_at'], data: projects };
  },
  async show(ctx) {
    const id = ctx.args[0] ?? (await ctx.project());
    return { record: await unwrap(ctx.api.GET('/accounts/projects/{project_id}', { params: { path: { project_id: id } } })) };
  },
  async create(ctx) {
    return { record: await unwrap(ctx.api.POST('/accounts/projects', { body: { name: arg(ctx, 0, '<name>') } })) };
  },
} satisfies Implementations;
