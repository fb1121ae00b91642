// `atrium mailboxes …` (declared in src/cli/groups.ts).
import { unwrap } from '../../api-client/client.ts';
import { arg, flag, need, str, toggle, type Context, type Implementations } from '../command-kit.ts';

const byAddress = async (ctx: Context) => ({ project_id: await ctx.project(), address: arg(ctx, 0, '<address>') });
const COLUMNS = ['address', 'room', 'queue', 'public'];

export const commands = {
  async list(ctx) {
    const filter = str(ctx, 'filter');
    const body = await unwrap(ctx.api.GET('/accounts/projects/{project_id}/mailboxes', { params: { path: { project_id: await ctx.project() }, query: { count: 1000, ...(filter ? { filter } : {}) } } }));
    return { rows: body.mailboxes, columns: COLUMNS, data: body };
  },
  async show(ctx) {
    return { record: (await unwrap(ctx.api.GET('/accounts/projects/{project_id}/mailboxes/{address}', { params: { path: await byAddress(ctx) } }))).mailbox };
  },
  async create(ctx) {
    const created = await unwrap(ctx.api.POST('/accounts/projects/{project_id}/mailboxes', {
      params: { path: { project_id: await ctx.project() } },
      body: { address: arg(ctx, 0, '<address>'), room: need(ctx, 'room'), queue: need(ctx, 'queue'), public: flag(ctx, 'public') },
    }));
    return { record: created.mailbox, keys: COLUMNS };
  },
  async update(ctx) {
    const path = await byAddress(ctx);
    const { mailbox: current } = await unwrap(ctx.api.GET('/accounts/projects/{project_id}/mailboxes/{address}', { params: { path } }));
    const updated = await unwrap(ctx.api.PUT('/accounts/projects/{project_id}/mailboxes/{address}', {
      params: { path },
      body: { room: str(ctx, 'room') ?? current.room, queue: str(ctx, 'queue') ?? current.queue, public: toggle(ctx, 'public', 'private') ?? current.public, annotations: current.annotations },
    }));
    return { record: updated.mailbox, keys: COLUMNS };
  },
  async delete(ctx) {
    await unwrap(ctx.api.DELETE('/accounts/projects/{project_id}/mailboxes/{address}', { params: { path: await byAddress(ctx) } }));
    return { message: `Deleted mailbox ${ctx.args[0]}` };
  },
} satisfies Implementations;
