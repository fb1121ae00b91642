// `atrium sessions …` (declared in src/cli/groups.ts).
import { unwrap } from '../../api-client/client.ts';
import { arg, flag, num, str, type Context, type Implementations } from '../command-kit.ts';

const bySession = async (ctx: Context) => ({ project_id: await ctx.project(), session_id: arg(ctx, 0, '<session_id>') });

export const commands = {
  async list(ctx) {
    const filter = str(ctx, 'filter');
    const params = { path: { project_id: await ctx.project() }, query: { limit: num(ctx, 'limit') ?? 100, ...(filter ? { filter } : {}) } };
    const body = flag(ctx, 'all')
      ? await unwrap(ctx.api.GET('/accounts/projects/{project_id}/sessions', { params }))
      : await unwrap(ctx.api.GET('/accounts/projects/{project_id}/sessions/active', { params }));
    return { rows: body.sessions, columns: ['id', 'room_name', 'status', 'kind', 'started_at', 'ended_at'], data: body };
  },
  async show(ctx) {
    return { record: await unwrap(ctx.api.GET('/accounts/projects/{project_id}/sessions/{session_id}', { params: { path: await bySession(ctx) } })) };
  },
  async events(ctx) {
    const type = str(ctx, 'type');
    const body = await unwrap(ctx.api.GET('/accounts/projects/{project_id}/sessions/{session_id}/events', { params: { path: await bySession(ctx), query: { limit: Math.min(num(ctx, 'limit') ?? 100, 500), ...(type ? { type } : {}) } } }));
    return { rows: body.events, columns: ['created_at', 'type', 'data'], data: body };
  },
  async terminate(ctx) {
    await unwrap(ctx.api.POST('/accounts/projects/{project_id}/sessions/{session_id}/terminate', { params: { path: await bySession(ctx) }, body: {} as never }));
    return { message: `Asked the room server to end session ${ctx.args[0]}` };
  },
} satisfies Implementations;
