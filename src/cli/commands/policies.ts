// `atrium policies …` (declared in src/cli/groups.ts): roles on one room, feed or repository, named
// by its name (or id), for a user by email, an API key, or every member or developer.
import { unwrap } from '../../api-client/client.ts';
import { arg, flag, idOf, many, str, UsageError, type Context, type Implementations } from '../command-kit.ts';

const TYPES = ['room', 'feed', 'repository'] as const;

/** The resource the first two arguments name: its type and id. */
async function resource(ctx: Context) {
  const type = arg(ctx, 0, '<room|feed|repository>');
  if (!(TYPES as readonly string[]).includes(type)) throw new UsageError(`the resource is a room, a feed or a repository, not ${JSON.stringify(type)}`);
  const name = arg(ctx, 1, '<name>');
  const project_id = await ctx.project();
  const list = { params: { path: { project_id }, query: { count: 1000 } } };
  const resource_id = type === 'room'
    ? (await unwrap(ctx.api.GET('/accounts/projects/{project_id}/rooms/{room_name}', { params: { path: { project_id, room_name: name } } }))).id
    : type === 'feed'
      ? await idOf('feed', name, async (filter) => (await unwrap(ctx.api.GET('/accounts/projects/{project_id}/feeds', { params: { ...list.params, query: { ...list.params.query, filter } } }))).feeds)
      : await idOf('repository', name, async (filter) => (await unwrap(ctx.api.GET('/accounts/projects/{project_id}/repositories', { params: { ...list.params, query: { ...list.params.query, filter } } }))).repositories);
  return { project_id, resource_type: type, resource_id };
}

/** The subject the options name: exactly one of --user, --api-key, --members, --developers. */
function subject(ctx: Context) {
  const user = str(ctx, 'user');
  const key = str(ctx, 'api-key');
  const chosen: Record<string, string>[] = [
    ...(user ? [{ type: 'user', email: user }] : []),
    ...(key ? [{ type: 'service_account', id: key }] : []),
    ...(flag(ctx, 'members') ? [{ type: 'userset', object_type: 'project', relation: 'member' }] : []),
    ...(flag(ctx, 'developers') ? [{ type: 'userset', object_type: 'project', relation: 'developer' }] : []),
  ];
  if (chosen.length !== 1) throw new UsageError('name one subject: --user EMAIL, --api-key ID, --members or --developers');
  return chosen[0]!;
}

type Grant = { subject: { type: string; id?: string | null; email?: string | null; relation?: string | null }; direct_roles: string[] };
const who = (grant: Grant) => grant.subject.type === 'userset' ? `every project ${grant.subject.relation}` : grant.subject.email ?? grant.subject.id ?? '';

export const commands = {
  async list(ctx) {
    const body = await unwrap(ctx.api.GET('/accounts/projects/{project_id}/policies/resources/{resource_type}/{resource_id}', { params: { path: await resource(ctx), query: { page_size: 1000 } } }));
    const rows = (body.access_grants as Grant[]).map((g) => ({ subject: who(g), kind: g.subject.type, roles: g.direct_roles }));
    return { rows, columns: ['subject', 'kind', 'roles'], data: body };
  },
  async grant(ctx) {
    const roles = many(ctx, 'role');
    if (roles.length === 0) throw new UsageError('name at least one --role');
    const body = { subject: subject(ctx), roles } as never;
    await unwrap(ctx.api.POST('/accounts/projects/{project_id}/policies/resources/{resource_type}/{resource_id}', { params: { path: await resource(ctx) }, body }));
    return { message: `Granted ${roles.join(', ')} on ${ctx.args[0]} ${ctx.args[1]}` };
  },
  async revoke(ctx) {
    const body = { subject: subject(ctx) } as never;
    await unwrap(ctx.api.DELETE('/accounts/projects/{project_id}/policies/resources/{resource_type}/{resource_id}', { params: { path: await resource(ctx) }, body }));
    return { message: `Revoked the roles on ${ctx.args[0]} ${ctx.args[1]}` };
  },
} satisfies Implementations;
