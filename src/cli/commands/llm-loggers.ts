// `atrium llm-loggers …` (declared in src/cli/groups.ts).
import { unwrap } from '../../api-client/client.ts';
import { arg, flag, idOf, need, str, toggle, UsageError, type Context, type Implementations } from '../command-kit.ts';

const COLUMNS = ['id', 'destination_feed_id', 'filter_expression', 'paused', 'created_at'];
const byLogger = async (ctx: Context) => ({ project_id: await ctx.project(), logger_id: arg(ctx, 0, '<logger_id>') });

export const commands = {
  async list(ctx) {
    const filter = str(ctx, 'filter');
    const body = await unwrap(ctx.api.GET('/accounts/projects/{project_id}/llm-loggers', { params: { path: { project_id: await ctx.project() }, query: { limit: 1000, ...(filter ? { filter } : {}) } } }));
    return { rows: body.loggers, columns: COLUMNS, data: body };
  },
  async create(ctx) {
    const project_id = await ctx.project();
    const feedId = await idOf('feed', need(ctx, 'feed'), async (name) => (await unwrap(ctx.api.GET('/accounts/projects/{project_id}/feeds', { params: { path: { project_id }, query: { filter: name, count: 1000 } } }))).feeds);
    const created = await unwrap(ctx.api.POST('/accounts/projects/{project_id}/llm-loggers', {
      params: { path: { project_id } },
      body: { destination_feed_id: feedId, filter_expression: need(ctx, 'expression'), paused: flag(ctx, 'paused') },
    }));
    return { record: created.logger, keys: COLUMNS };
  },
  async update(ctx) {
    const paused = toggle(ctx, 'pause', 'resume');
    const expression = str(ctx, 'expression');
    if (paused === undefined && expression === undefined) throw new UsageError('give --expression, --pause or --resume');
    const path = await byLogger(ctx);
    const { logger: current } = await unwrap(ctx.api.GET('/accounts/projects/{project_id}/llm-loggers/{logger_id}', { params: { path } }));
    const updated = await unwrap(ctx.api.PUT('/accounts/projects/{project_id}/llm-loggers/{logger_id}', {
      params: { path },
      body: { destination_feed_id: current.destination_feed_id, filter_expression: expression ?? current.filter_expression, paused: paused ?? current.paused, annotations: current.annotations },
    }));
    return { record: updated.logger, keys: COLUMNS };
  },
  async delete(ctx) {
    await unwrap(ctx.api.DELETE('/accounts/projects/{project_id}/llm-loggers/{logger_id}', { params: { path: await byLogger(ctx) } }));
    return { message: `Deleted LLM logger ${ctx.args[0]}` };
  },
} satisfies Implementations;
