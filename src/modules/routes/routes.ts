// Routes (domains to rooms): create, list (project and room), fetch, replace and delete by domain, and
// resolve a domain for room servers and ingresses.
import type { Api } from '../../module.ts';
import type { AppContext } from '../../context.ts';
import { pageOf } from '../../platform/http/lists.ts';
import { Ok, OK, ProjectParams } from '../../platform/http/schemas.ts';
import { accessOf } from '../../platform/http/auth.ts';
import { ACTS_IN_ROOM } from '../rooms/service.ts';
import * as schema from './schema.ts';
import * as service from './service.ts';

const tags = ['Routes'];

export function routeRoutes(app: Api, ctx: AppContext): void {
  const base = '/accounts/projects/:project_id/routes';
  // A route to a room brings traffic to its services: creating or moving one needs the caller's own access there.
  app.post(base, {
    config: { auth: { permission: 'route_creator', within: ACTS_IN_ROOM } },
    schema: {
      tags, summary: 'Route a domain to a room (or a managed agent)', params: ProjectParams, body: schema.RouteCreate, response: { 201: schema.RouteEnvelope },
      description: 'The domain is unique across the deployment: 409 when any project has claimed it. The room (or agent) must exist in the project (400 naming the field otherwise); a room must be one the caller may connect to (`room.connect`, 403 otherwise).',
    },
  }, async (request, reply) => reply.status(201).send(await service.createRoute(ctx, ctx.authority.actorOf(request), request.params.project_id, request.body)));

  app.get(base, {
    config: { auth: { permission: 'route_inventory' } },
    schema: { tags, summary: "List the project's routes, by domain", params: ProjectParams, querystring: schema.RouteListQuery, response: { 200: schema.RouteList } },
  }, async (request) => service.listRoutes(ctx, request.params.project_id, undefined, pageOf(request.query)));

  app.get('/accounts/projects/:project_id/rooms/:room_name/routes', {
    config: { auth: { permission: 'route_inventory' } },
    schema: { tags, summary: "List the routes to a room, by domain", params: schema.RoomParams, querystring: schema.RouteListQuery, response: { 200: schema.RouteList } },
  }, async (request) => service.listRoutes(ctx, request.params.project_id, request.params.room_name, pageOf(request.query)));

  app.get(`${base}/:domain`, {
    config: { auth: { permission: 'route_inventory' } },
    schema: { tags, summary: 'Fetch a route', params: schema.DomainParams, response: { 200: schema.RouteEnvelope } },
  }, async (request) => service.getRoute(ctx, request.params.project_id, request.params.domain));

  app.put(`${base}/:domain`, {
    config: { auth: { permission: 'route_manager', within: ACTS_IN_ROOM } },
    schema: { tags, summary: 'Replace a route', params: schema.DomainParams, body: schema.RouteUpdate, response: { 200: schema.RouteEnvelope } },
  }, async (request) => service.updateRoute(ctx, ctx.authority.actorOf(request), request.params.project_id, request.params.domain, request.body));

  app.delete(`${base}/:domain`, {
    config: { auth: { permission: 'route_manager' } },
    schema: { tags, summary: 'Delete a route (the domain is free again)', params: schema.DomainParams, response: { 200: Ok } },
  }, async (request) => {
    await service.deleteRoute(ctx, request.params.project_id, request.params.domain);
    return OK;
  });

  app.get('/api/routes/resolve', {
    config: {
      auth: {
        permission: 'room_server',
        project: { what: 'Route', resolve: (request) => service.projectOfDomain(ctx, (request.query as { domain: string }).domain) },
      },
    },
    schema: {
      tags, summary: 'Resolve a domain to its project, room and port (room servers, ingresses)', querystring: schema.ResolveQuery, response: { 200: schema.Resolution },
      description: 'Needs the room_server role in the project that claimed the domain; a domain of a project the caller cannot see answers 404, like one nobody claimed. See docs/room-servers.md.',
    },
  }, async (request) => service.resolveRoute(ctx, accessOf(request).projectId, request.query.domain));
}
