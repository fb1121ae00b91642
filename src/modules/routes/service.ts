// Rules for routes: a domain (a lower-case DNS name) is claimed by one project of the deployment; it
// goes to a room or a managed agent of that project, which must exist; ingresses and room servers
// resolve a domain to its project, room and port.
import type { AppContext } from '../../context.ts';
import type { Actor } from '../../platform/http/authority.ts';
import { badRequest, conflict, notFound } from '../../platform/http/errors.ts';
import type { Page } from '../../platform/http/lists.ts';
import { findAgent } from '../agents/service.ts';
import { findRoom, getRoom, requireInRoom } from '../rooms/service.ts';
import type { RouteSpecInput } from './schema.ts';
import * as store from './store.ts';

export type RouteInput = { spec: RouteSpecInput } | { domain: string; room_name: string; port: number };
export type RouteChange = { spec: RouteSpecInput } | { room_name: string; port: number };

type Paths = RouteSpecInput['paths'];

function firstPort(spec: Record<string, unknown>): number | null {
  return (spec.paths as Paths | undefined)?.find((p) => p.targetPort !== undefined)?.targetPort ?? null;
}

/** The route as shown: its backend names the room as it is called now. */
function routeView(row: store.RouteWithRoom) {
  const spec = row.roomName === null ? row.spec : { ...row.spec, backend: { room: { name: row.roomName }, agent: null } };
  return {
    domain: row.domain,
    project_id: row.projectId,
    room_name: row.roomName,
    agent_name: row.agentName,
    port: firstPort(row.spec),
    spec,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

const shortSpec = (domain: string, roomName: string, port: number): RouteSpecInput => ({
  version: 'v1', kind: 'Route', metadata: { name: domain, annotations: {} }, domain, backend: { room: { name: roomName }, agent: null }, paths: [{ path: '/', pathType: 'prefix', targetPort: port }],
});

/** The spec's backend, checked: exactly one of a room and an agent of the project, and sound paths. */
async function backendOf(ctx: AppContext, actor: Actor, projectId: string, spec: RouteSpecInput, field: string): Promise<{ roomId: string | null; agentName: string | null }> {
  const { room, agent } = spec.backend;
  if (Boolean(room) === Boolean(agent)) throw badRequest('spec.backend names exactly one of room and agent');
  const paths = new Set<string>();
  for (const [i, path] of spec.paths.entries()) {
    if ((path.targetPort === undefined) === (path.targetContent === undefined)) throw badRequest(`spec.paths.${i} has exactly one of targetPort and targetContent`);
    const key = `${path.pathType} ${path.path}`;
    if (paths.has(key)) throw badRequest(`spec.paths.${i}: ${path.pathType} path ${JSON.stringify(path.path)} is listed twice`);
    paths.add(key);
  }
  if (room) {
    const found = await findRoom(ctx, projectId, room.name);
    if (!found) throw badRequest(`${field}: the project has no room named ${JSON.stringify(room.name)}`);
    // Its traffic reaches the room's services: only for a caller who may connect to it.
    await requireInRoom(ctx, actor, found);
    return { roomId: found.id, agentName: null };
  }
  const found = await findAgent(ctx, projectId, agent!.name);
  if (!found) throw badRequest(`body.spec.backend.agent.name: the project has no managed agent named ${JSON.stringify(agent!.name)}`);
  return { roomId: null, agentName: found.name };
}

/** Where the body names the room, for messages. */
const roomField = (input: object) => ('spec' in input ? 'body.spec.backend.room.name' : 'body.room_name');

const claimed = (domain: string) => conflict(`The domain ${domain} is already routed`, 'already_exists');

export async function createRoute(ctx: AppContext, actor: Actor, projectId: string, input: RouteInput) {
  const spec = 'spec' in input ? input.spec : shortSpec(input.domain, input.room_name, input.port);
  const backend = await backendOf(ctx, actor, projectId, spec, roomField(input));
  const row = await store.insertRoute(ctx.db, { domain: spec.domain, projectId, ...backend, spec });
  if (!row) throw claimed(spec.domain);
  return { route: routeView((await store.findRoute(ctx.db, projectId, spec.domain))!) };
}

export async function getRoute(ctx: AppContext, projectId: string, domain: string) {
  const row = await store.findRoute(ctx.db, projectId, domain);
  if (!row) throw notFound('Route');
  return { route: routeView(row) };
}

export async function listRoutes(ctx: AppContext, projectId: string, roomName: string | undefined, page: Page) {
  const roomId = roomName === undefined ? undefined : (await getRoom(ctx, projectId, roomName)).id;
  const { items, total } = await store.listRoutes(ctx.db, projectId, roomId, page);
  return { routes: items.map(routeView), total };
}

export async function updateRoute(ctx: AppContext, actor: Actor, projectId: string, domain: string, input: RouteChange) {
  const spec = 'spec' in input ? input.spec : shortSpec(domain, input.room_name, input.port);
  if (spec.domain !== domain) throw badRequest(`spec.domain must be ${domain}, the domain in the path (a route cannot move to another domain)`);
  if (!(await store.findRoute(ctx.db, projectId, domain))) throw notFound('Route');
  const backend = await backendOf(ctx, actor, projectId, spec, roomField(input));
  if (!(await store.updateRoute(ctx.db, projectId, domain, { ...backend, spec }))) throw notFound('Route');
  return getRoute(ctx, projectId, domain);
}

export async function deleteRoute(ctx: AppContext, projectId: string, domain: string): Promise<void> {
  if (!(await store.deleteRoute(ctx.db, projectId, domain))) throw notFound('Route');
}

/** Which project claimed a domain, for the auth hook of the resolve route (it then checks the caller's role there). */
export function projectOfDomain(ctx: AppContext, domain: string): Promise<string | undefined> {
  return store.projectOfDomain(ctx.db, domain);
}

/** Where a domain of the project goes: for ingresses and room servers. */
export async function resolveRoute(ctx: AppContext, projectId: string, domain: string) {
  const row = await store.findRoute(ctx.db, projectId, domain);
  if (!row) throw notFound('Route');
  return {
    domain: row.domain,
    project_id: row.projectId,
    room_id: row.roomId,
    room_name: row.roomName,
    agent_name: row.agentName,
    port: firstPort(row.spec),
    paths: row.spec.paths as Record<string, unknown>[],
  };
}
