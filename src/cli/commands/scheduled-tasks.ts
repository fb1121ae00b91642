// `atrium scheduled-tasks …` (declared in src/cli/groups.ts).
import { unwrap } from '../../api-client/client.ts';
import { arg, flag, jsonOption, need, num, str, UsageError, type Context, type Implementations } from '../command-kit.ts';

const byTask = async (ctx: Context) => ({ project_id: await ctx.project(), task_id: arg(ctx, 0, '<task_id>') });
const COLUMNS = ['id', 'room_name', 'queue_name', 'schedule', 'active', 'next_run_at', 'last_status'];

export const commands = {
  async list(ctx) {
    const filter = str(ctx, 'filter');
    const body = await unwrap(ctx.api.GET('/accounts/projects/{project_id}/scheduled-tasks', { params: { path: { project_id: await ctx.project() }, query: { limit: 1000, ...(filter ? { filter } : {}) } } }));
    return { rows: body.tasks, columns: COLUMNS, data: body };
  },
  async show(ctx) {
    const path = await byTask(ctx);
    const [task] = (await unwrap(ctx.api.GET('/accounts/projects/{project_id}/scheduled-tasks', { params: { path: { project_id: path.project_id }, query: { task_id: path.task_id } } }))).tasks;
    if (!task) throw new UsageError(`no scheduled task ${path.task_id}`);
    return { record: task };
  },
  async create(ctx) {
    const payload = jsonOption<Record<string, unknown>>(ctx, 'payload') ?? {};
    const zone = str(ctx, 'time-zone');
    const task = await unwrap(ctx.api.POST('/accounts/projects/{project_id}/rooms/{room_name}/scheduled-tasks', {
      params: { path: { project_id: await ctx.project(), room_name: need(ctx, 'room') } },
      body: {
        spec: {
          version: 'v1', kind: 'ScheduledTask', metadata: { name: str(ctx, 'name') ?? null, annotations: {} },
          schedule: need(ctx, 'schedule'), active: !flag(ctx, 'inactive'), once: flag(ctx, 'once'), queue: { name: need(ctx, 'queue'), payload },
        },
        ...(zone ? { time_zone: zone } : {}),
      } as never,
    }));
    return { record: task, keys: COLUMNS };
  },
  async delete(ctx) {
    await unwrap(ctx.api.DELETE('/accounts/projects/{project_id}/scheduled-tasks/{task_id}', { params: { path: await byTask(ctx) } }));
    return { message: `Deleted scheduled task ${ctx.args[0]}` };
  },
  async runs(ctx) {
    const status = str(ctx, 'status');
    const body = await unwrap(ctx.api.GET('/accounts/projects/{project_id}/scheduled-tasks/{task_id}/runs', { params: { path: await byTask(ctx), query: { limit: num(ctx, 'limit') ?? 100, ...(status ? { status: status as never } : {}) } } }));
    return { rows: body.runs, columns: ['id', 'scheduled_time', 'status', 'attempt_count', 'completed_at', 'error'], data: body };
  },
} satisfies Implementations;
