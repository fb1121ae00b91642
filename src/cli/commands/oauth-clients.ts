// `atrium oauth-clients …` (declared in src/cli/groups.ts).
import { unwrap } from '../../api-client/client.ts';
import { arg, flag, many, str, UsageError, type Implementations } from '../command-kit.ts';

export const commands = {
  async list(ctx) {
    const filter = str(ctx, 'filter');
    const body = await unwrap(ctx.api.GET('/accounts/projects/{project_id}/oauth/clients', { params: { path: { project_id: await ctx.project() }, query: { count: 1000, ...(filter ? { filter } : {}) } } }));
    return { rows: body.clients, columns: ['client_id', 'name', 'public', 'redirect_uris', 'scope'], data: body };
  },
  async show(ctx) {
    return { record: await unwrap(ctx.api.GET('/accounts/projects/{project_id}/oauth/clients/{client_id}', { params: { path: { project_id: await ctx.project(), client_id: arg(ctx, 0, '<client_id>') } } })) };
  },
  async create(ctx) {
    const redirects = many(ctx, 'redirect-uri');
    if (!redirects.length) throw new UsageError('give at least one --redirect-uri');
    return {
      record: await unwrap(ctx.api.POST('/accounts/projects/{project_id}/oauth/clients', {
        params: { path: { project_id: await ctx.project() } },
        body: {
          name: arg(ctx, 0, '<name>'), grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], redirect_uris: redirects,
          scope: str(ctx, 'scope') ?? 'openid profile email profile:read rooms:connect', public: flag(ctx, 'public'),
        } as never,
      })),
    };
  },
  async delete(ctx) {
    await unwrap(ctx.api.DELETE('/accounts/projects/{project_id}/oauth/clients/{client_id}', { params: { path: { project_id: await ctx.project(), client_id: arg(ctx, 0, '<client_id>') } } }));
    return { message: `Deleted OAuth client ${ctx.args[0]}` };
  },
} satisfies Implementations;
