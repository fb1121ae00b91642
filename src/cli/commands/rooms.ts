// `atrium rooms …` (declared in src/cli/groups.ts).
import { unwrap } from '../../api-client/client.ts';
import { arg, jsonOption, num, str, UsageError, type Context, type Implementations } from '../command-kit.ts';

const byName = async (ctx: Context) => {
  const project_id = await ctx.project();
  return { project_id, room: await unwrap(ctx.api.GET('/accounts/projects/{project_id}/rooms/{room_name}', { params: { path: { project_id, room_name: arg(ctx, 0, '<name>') } } })) };
};

export const commands = {
  async list(ctx) {
    const filter = str(ctx, 'filter');
    const body = await unwrap(ctx.api.GET('/accounts/projects/{project_id}/rooms', { params: { path: { project_id: await ctx.project() }, query: { limit: num(ctx, 'limit') ?? 100, ...(filter ? { filter } : {}) } } }));
    return { rows: body.rooms, columns: ['id', 'name', 'created_at'], data: body };
  },
  async show(ctx) {
    return { record: (await byName(ctx)).room };
  },
  async create(ctx) {
    const metadata = jsonOption<Record<string, unknown>>(ctx, 'metadata');
    return { record: await unwrap(ctx.api.POST('/accounts/projects/{project_id}/rooms', { params: { path: { project_id: await ctx.project() } }, body: { name: arg(ctx, 0, '<name>'), if_not_exists: true, ...(metadata ? { metadata } : {}) } })) };
  },
  async update(ctx) {
    const name = str(ctx, 'name');
    const metadata = jsonOption<Record<string, unknown>>(ctx, 'metadata');
    if (name === undefined && metadata === undefined) throw new UsageError('give --name or --metadata');
    const { project_id, room } = await byName(ctx);
    return { record: await unwrap(ctx.api.PUT('/accounts/projects/{project_id}/rooms/{room_id}', { params: { path: { project_id, room_id: room.id } }, body: { name: name ?? room.name, ...(metadata ? { metadata } : {}) } })) };
  },
  async delete(ctx) {
    const { project_id, room } = await byName(ctx);
    await unwrap(ctx.api.DELETE('/accounts/projects/{project_id}/rooms/{room_id}', { params: { path: { project_id, room_id: room.id } } }));
    return { message: `Deleted room ${room.name}` };
  },
  async connect(ctx) {
    return { record: await unwrap(ctx.api.POST('/accounts/projects/{project_id}/rooms/{room_name}/connect', { params: { path: { project_id: await ctx.project(), room_name: arg(ctx, 0, '<name>') } }, body: {} })) };
  },
} satisfies Implementations;
