// `atrium webhooks …` but `listen` (declared in src/cli/groups.ts; `listen` is src/cli/webhooks.ts).
import { randomBytes } from 'node:crypto';
import { unwrap } from '../../api-client/client.ts';
import { arg, many, str, UsageError, type Context, type Implementations } from '../command-kit.ts';

const byWebhook = async (ctx: Context) => ({ project_id: await ctx.project(), webhook_id: arg(ctx, 0, '<webhook_id>') });

export const commands = {
  async list(ctx) {
    const filter = str(ctx, 'filter');
    const { webhooks: rows } = await unwrap(ctx.api.GET('/accounts/projects/{project_id}/webhooks', { params: { path: { project_id: await ctx.project() }, query: filter ? { filter } : {} } }));
    return { rows, columns: ['id', 'name', 'url', 'events', 'enabled'], data: rows };
  },
  async create(ctx) {
    const url = arg(ctx, 0, '<url>');
    const events = many(ctx, 'event');
    if (!events.length) throw new UsageError('give at least one --event');
    return {
      record: await unwrap(ctx.api.POST('/accounts/projects/{project_id}/webhooks', {
        params: { path: { project_id: await ctx.project() } },
        body: { name: str(ctx, 'name') ?? (URL.parse(url)?.host || 'webhook'), url, events, secret: str(ctx, 'secret') ?? randomBytes(32).toString('base64url') } as never,
      })),
    };
  },
  async delete(ctx) {
    await unwrap(ctx.api.DELETE('/accounts/projects/{project_id}/webhooks/{webhook_id}', { params: { path: await byWebhook(ctx) } }));
    return { message: `Deleted webhook ${ctx.args[0]}` };
  },
  async deliveries(ctx) {
    const status = str(ctx, 'status');
    const body = await unwrap(ctx.api.GET('/accounts/projects/{project_id}/webhooks/{webhook_id}/deliveries', {
      params: { path: await byWebhook(ctx), query: { limit: 100, ...(status ? { status: status as never } : {}) } },
    }));
    return { rows: body.deliveries as Record<string, unknown>[], columns: ['id', 'event', 'status', 'attempt_count', 'created_at'], data: body };
  },
  async test(ctx) {
    const body = await unwrap(ctx.api.POST('/accounts/projects/{project_id}/webhooks/{webhook_id}/test', { params: { path: await byWebhook(ctx) }, body: {} }));
    return { message: `Queued test delivery ${(body as { id: string }).id}`, data: body };
  },
  async redeliver(ctx) {
    const body = await unwrap(ctx.api.POST('/accounts/projects/{project_id}/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver', {
      params: { path: { ...(await byWebhook(ctx)), delivery_id: arg(ctx, 1, '<delivery_id>') } }, body: {},
    }));
    return { message: `Queued delivery ${ctx.args[1]} again`, data: body };
  },
} satisfies Implementations;
