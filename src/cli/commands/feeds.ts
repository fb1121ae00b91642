// `atrium feeds …` (declared in src/cli/groups.ts): a feed is named by its id or its name.
import { parse } from 'yaml';
import { unwrap } from '../../api-client/client.ts';
import { arg, flag, idOf, need, readText, str, toggle, UsageError, type Context, type Implementations } from '../command-kit.ts';

const COLUMNS = ['id', 'name', 'visibility', 'paused', 'created_at'];

/** The feed of argument `index`, by id or by name. */
async function feed(ctx: Context, index = 0) {
  const project_id = await ctx.project();
  const feed_id = await idOf('feed', arg(ctx, index, '<feed>'), async (name) => (await unwrap(ctx.api.GET('/accounts/projects/{project_id}/feeds', { params: { path: { project_id }, query: { filter: name, count: 1000 } } }))).feeds);
  return { project_id, feed_id };
}

function json(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${what} is not valid JSON: ${(error as Error).message}`);
  }
}

export const commands = {
  async list(ctx) {
    const filter = str(ctx, 'filter');
    const body = await unwrap(ctx.api.GET('/accounts/projects/{project_id}/feeds', { params: { path: { project_id: await ctx.project() }, query: { count: 1000, ...(filter ? { filter } : {}) } } }));
    return { rows: body.feeds, columns: COLUMNS, data: body };
  },
  async show(ctx) {
    return { record: (await unwrap(ctx.api.GET('/accounts/projects/{project_id}/feeds/{feed_id}', { params: { path: await feed(ctx) } }))).feed };
  },
  async create(ctx) {
    const schemaFile = str(ctx, 'schema');
    const description = str(ctx, 'description');
    const visibility = str(ctx, 'visibility');
    const created = await unwrap(ctx.api.POST('/accounts/projects/{project_id}/feeds', {
      params: { path: { project_id: await ctx.project() } },
      body: {
        name: arg(ctx, 0, '<name>'),
        ...(visibility ? { visibility: visibility as never } : {}),
        ...(description ? { description } : {}),
        ...(schemaFile ? { message_schema: parse(readText(schemaFile)) as never } : {}),
        paused: flag(ctx, 'paused'),
      },
    }));
    return { record: created.feed, keys: COLUMNS };
  },
  async update(ctx) {
    const paused = toggle(ctx, 'pause', 'resume');
    const description = str(ctx, 'description');
    if (paused === undefined && description === undefined) throw new UsageError('give --pause, --resume or --description');
    const path = await feed(ctx);
    const current = (await unwrap(ctx.api.GET('/accounts/projects/{project_id}/feeds/{feed_id}', { params: { path } }))).feed;
    const updated = await unwrap(ctx.api.PUT('/accounts/projects/{project_id}/feeds/{feed_id}', {
      params: { path },
      body: { name: current.name, description: description ?? current.description, paused: paused ?? current.paused, annotations: current.annotations, message_schema: current.message_schema as never },
    }));
    return { record: updated.feed, keys: COLUMNS };
  },
  async delete(ctx) {
    await unwrap(ctx.api.DELETE('/accounts/projects/{project_id}/feeds/{feed_id}', { params: { path: await feed(ctx) } }));
    return { message: `Deleted feed ${ctx.args[0]}` };
  },
  async publish(ctx) {
    const message = json(arg(ctx, 1, '<json>'), 'the message');
    const published = await unwrap(ctx.api.POST('/accounts/projects/{project_id}/feeds/{feed_id}/messages', { params: { path: await feed(ctx) }, body: message as never }));
    return { message: `Published message ${published.id} (position ${published.seq})`, data: published };
  },
  async subscriptions(ctx) {
    const body = await unwrap(ctx.api.GET('/accounts/projects/{project_id}/feeds/{feed_id}/subscriptions', { params: { path: await feed(ctx), query: { count: 1000 } } }));
    return { rows: body.subscriptions, columns: ['id', 'room', 'path', 'filename_datetime_format', 'created_at'], data: body };
  },
  async subscribe(ctx) {
    const path = str(ctx, 'path');
    const created = await unwrap(ctx.api.POST('/accounts/projects/{project_id}/feeds/{feed_id}/subscriptions', {
      params: { path: await feed(ctx) },
      body: { room: need(ctx, 'room'), path: path ?? '' },
    }));
    return { record: created.subscription, keys: ['id', 'room', 'path', 'created_at'] };
  },
  async unsubscribe(ctx) {
    await unwrap(ctx.api.DELETE('/accounts/projects/{project_id}/feeds/{feed_id}/subscriptions/{subscription_id}', { params: { path: { ...(await feed(ctx)), subscription_id: arg(ctx, 1, '<subscription_id>') } } }));
    return { message: `Deleted subscription ${ctx.args[1]}` };
  },
} satisfies Implementations;
