// Services, project-wide and room-scoped: create, list, fetch, replace and delete by id.
import type { Api } from '../../module.ts';
import type { AppContext } from '../../context.ts';
import { pageOf } from '../../platform/http/lists.ts';
import { Ok, OK, ProjectParams } from '../../platform/http/schemas.ts';
import { ACTS_IN_ROOM } from '../rooms/service.ts';
import * as schema from './schema.ts';
import * as service from './service.ts';

const tags = ['Services'];
const BODY_NOTE = 'The body is a ServiceSpec, or `{template, values}`: a ServiceTemplate in YAML whose declared variables are checked (required unless `optional`, `enum`, `type`) and substituted for `{{ name }}` placeholders; an unknown or missing variable is a 400 naming it. Values of `obscure` variables read "********" in every answer.';

/** The routes of project services, or of rooms' own services. */
export function serviceRoutes(scope: 'project' | 'room') {
  return (app: Api, ctx: AppContext): void => {
    const base = scope === 'project' ? '/accounts/projects/:project_id/services' : '/accounts/projects/:project_id/rooms/:room_name/services';
    const Params = scope === 'project' ? ProjectParams : schema.RoomParams;
    const ById = scope === 'project' ? schema.ProjectServiceParams : schema.RoomServiceParams;
    const what = scope === 'project' ? 'a project service (available to every room)' : "a room's own service";
    const roomOf = (params: object) => (params as { room_name?: string }).room_name;
    // A room's service runs in it: writing one needs the writer's own access there.
    const within = scope === 'room' ? { within: ACTS_IN_ROOM } : {};

    app.post(base, {
      config: { auth: { permission: 'service_creator', ...within } },
      schema: {
        tags, summary: `Create ${what}`, params: Params, body: schema.ServiceBody, response: { 201: schema.Service },
        description: `${BODY_NOTE} Answers the stored spec with its \`id\`; 409 when the name is taken${scope === 'room' ? ' in the room' : ''}.`,
      },
    }, async (request, reply) => reply.status(201).send(await service.createService(ctx, ctx.authority.actorOf(request), request.params.project_id, roomOf(request.params), request.body)));

    app.get(base, {
      config: { auth: { permission: 'service_inventory' } },
      schema: { tags, summary: `List ${scope === 'project' ? 'project services' : "a room's own services"}, by name`, params: Params, querystring: schema.ServiceListQuery, response: { 200: schema.ServiceList } },
    }, async (request) => service.listServices(ctx, request.params.project_id, roomOf(request.params), pageOf(request.query)));

    app.get(`${base}/:service_id`, {
      config: { auth: { permission: 'service_inventory' } },
      schema: { tags, summary: `Fetch ${what}`, params: ById, response: { 200: schema.Service } },
    }, async (request) => service.getService(ctx, request.params.project_id, roomOf(request.params), request.params.service_id));

    app.put(`${base}/:service_id`, {
      config: { auth: { permission: 'service_manager', ...within } },
      schema: { tags, summary: `Replace ${what}`, params: ById, body: schema.ServiceBody, response: { 200: schema.Service }, description: BODY_NOTE },
    }, async (request) => service.updateService(ctx, ctx.authority.actorOf(request), request.params.project_id, roomOf(request.params), request.params.service_id, request.body));

    app.delete(`${base}/:service_id`, {
      config: { auth: { permission: 'service_manager' } },
      schema: { tags, summary: `Delete ${what}`, params: ById, response: { 200: Ok } },
    }, async (request) => {
      await service.deleteService(ctx, request.params.project_id, roomOf(request.params), request.params.service_id);
      return OK;
    });
  };
}
