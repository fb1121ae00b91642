// `atrium shares …` (declared in src/cli/groups.ts).
import { unwrap } from '../../api-client/client.ts';
import { arg, jsonOption, need, str, type Implementations } from '../command-kit.ts';

type Share = { id: string; settings: Record<string, unknown>; expires_at: string | null; created_at: string };
const row = (share: Share) => ({ id: share.id, label: share.settings.label ?? '', room: share.settings.room, expires_at: share.expires_at ?? 'never', created_at: share.created_at });

export const commands = {
  async list(ctx) {
    const filter = str(ctx, 'filter');
    const body = await unwrap(ctx.api.GET('/accounts/projects/{project_id}/shares', { params: { path: { project_id: await ctx.project() }, query: { limit: 1000, ...(filter ? { filter } : {}) } } }));
    return { rows: body.shares.map(row), columns: ['id', 'label', 'room', 'expires_at', 'created_at'], data: body };
  },
  async create(ctx) {
    const label = str(ctx, 'label');
    const expires = str(ctx, 'expires-at');
    const grants = jsonOption<Record<string, unknown>>(ctx, 'grants');
    const created = await unwrap(ctx.api.POST('/accounts/projects/{project_id}/shares', {
      params: { path: { project_id: await ctx.project() } },
      body: { settings: { room: need(ctx, 'room'), ...(label ? { label } : {}), ...(expires ? { expires_at: expires } : {}), ...(grants ? { grants } : {}) } },
    }));
    return { record: { ...row(created), token: created.token }, keys: ['id', 'label', 'room', 'expires_at', 'token'] };
  },
  async delete(ctx) {
    await unwrap(ctx.api.DELETE('/accounts/projects/{project_id}/shares/{share_id}', { params: { path: { project_id: await ctx.project(), share_id: arg(ctx, 0, '<share_id>') } } }));
    return { message: `Deleted share ${ctx.args[0]}` };
  },
} satisfies Implementations;
