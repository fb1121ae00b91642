// `atrium members …` (declared in src/cli/groups.ts).
import { unwrap } from '../../api-client/client.ts';
import { arg, isUuid, many, str, UsageError, type Context, type Implementations } from '../command-kit.ts';

const byInvitation = async (ctx: Context) => ({ params: { path: { project_id: await ctx.project(), invitation_id: arg(ctx, 0, '<invitation_id>') } } });

async function add(ctx: Context) {
  const who = arg(ctx, 0, '<email|user_id>');
  const roles = many(ctx, 'role');
  const body = await unwrap(ctx.api.POST('/accounts/projects/{project_id}/users', {
    params: { path: { project_id: await ctx.project() } },
    body: { ...(isUuid(who) ? { user_id: who } : { email: who }), ...(roles.length ? { roles: roles as never } : {}) },
  }));
  if (body.status === 'invited') {
    const mailed = body.invitation?.mail_sent === false ? ' (not mailed: the server has no mail transport; resend once it has)' : '';
    return { message: `Invited ${who}: the invitation expires ${body.invitation?.expires_at}${mailed}`, data: body };
  }
  return { message: `Added ${who} (user ${body.user_id})`, data: body };
}

export const commands = {
  async list(ctx) {
    const filter = str(ctx, 'filter');
    const body = await unwrap(ctx.api.GET('/accounts/projects/{project_id}/users', { params: { path: { project_id: await ctx.project() }, query: { count: 1000, ...(filter ? { filter } : {}) } } }));
    return { rows: body.users, columns: ['user_id', 'email', 'roles', 'added_at'], data: body };
  },
  add,
  async invite(ctx) {
    if (!arg(ctx, 0, '<email>').includes('@')) throw new UsageError('invite takes an email address; add a user by id with `atrium members add USER_ID`');
    return add(ctx);
  },
  async 'set-roles'(ctx) {
    const roles = many(ctx, 'role');
    if (roles.length === 0) throw new UsageError('name at least one --role');
    await unwrap(ctx.api.PUT('/accounts/projects/{project_id}/users/{user_id}', { params: { path: { project_id: await ctx.project(), user_id: arg(ctx, 0, '<user_id>') } }, body: { roles: roles as never } }));
    return { message: `Roles of ${ctx.args[0]}: ${roles.join(', ')}` };
  },
  async remove(ctx) {
    await unwrap(ctx.api.DELETE('/accounts/projects/{project_id}/users/{user_id}', { params: { path: { project_id: await ctx.project(), user_id: arg(ctx, 0, '<user_id>') } } }));
    return { message: `Removed ${ctx.args[0]}` };
  },
  async invitations(ctx) {
    const filter = str(ctx, 'filter');
    const body = await unwrap(ctx.api.GET('/accounts/projects/{project_id}/invitations', { params: { path: { project_id: await ctx.project() }, query: { limit: 1000, ...(filter ? { filter } : {}) } } }));
    return { rows: body.invitations, columns: ['id', 'email', 'roles', 'status', 'sent_count', 'expires_at'], data: body };
  },
  async resend(ctx) {
    const body = await unwrap(ctx.api.POST('/accounts/projects/{project_id}/invitations/{invitation_id}/resend', { ...(await byInvitation(ctx)), body: {} }));
    return { message: `Sent again to ${body.email}; expires ${body.expires_at}`, data: body };
  },
  async revoke(ctx) {
    await unwrap(ctx.api.DELETE('/accounts/projects/{project_id}/invitations/{invitation_id}', await byInvitation(ctx)));
    return { message: `Revoked ${ctx.args[0]}` };
  },
  async roles(ctx) {
    const { roles } = await unwrap(ctx.api.GET('/accounts/roles'));
    return { rows: roles, columns: ['name', 'group', 'description'], data: roles };
  },
} satisfies Implementations;
