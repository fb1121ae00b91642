// Rooms: create, list, fetch by name, update and delete by id, and connect.
import { Type } from 'typebox';
import type { Api } from '../../module.ts';
import type { AppContext } from '../../context.ts';
import { pageOf } from '../../platform/http/lists.ts';
import { EmptyBody, Ok, OK, ProjectParams, Uuid } from '../../platform/http/schemas.ts';
import type { AuthRequirement } from '../../platform/http/auth.ts';
import * as schema from './schema.ts';
import * as service from './service.ts';
import type { RoomRow } from './store.ts';

const ByName = Type.Object({ project_id: Uuid, room_name: schema.RoomName });
const ById = Type.Object({ project_id: Uuid, room_id: Uuid });
const tags = ['Rooms'];
/** A route's action on the room its path names (`room.<action>`), with the project role every member holds. */
const byName = (action: string): { auth: AuthRequirement } => ({ auth: { permission: 'member', resource: { type: service.ROOM_RESOURCE, param: 'room_name', by: 'name', action } } });
const byId = (action: string): { auth: AuthRequirement } => ({ auth: { permission: 'developer', resource: { type: service.ROOM_RESOURCE, param: 'room_id', action } } });

export function roomRoutes(app: Api, ctx: AppContext): void {
  app.post('/accounts/projects/:project_id/rooms', {
    // The room's insert writes the request's audit entry itself (the hottest write).
    config: { auth: { permission: 'room_creator' }, audit: 'statement' },
    schema: {
      tags, summary: 'Create a room', params: ProjectParams, body: schema.RoomCreate,
      response: { 201: schema.Room, 200: schema.Room },
      description: '201 when created; 200 with the existing room when `if_not_exists` is true and the name is taken; 409 otherwise.',
    },
  }, async (request, reply) => {
    const { room, created } = await service.createRoom(ctx, request.params.project_id, request.body);
    return reply.status(created ? 201 : 200).send(service.roomView(room));
  });

  app.get('/accounts/projects/:project_id/rooms', {
    config: { auth: { permission: 'member' } },
    schema: { tags, summary: 'List rooms', params: ProjectParams, querystring: schema.RoomListQuery, response: { 200: schema.RoomList } },
  }, async (request) => {
    return service.listRooms(ctx, request.params.project_id, { ...pageOf(request.query), orderBy: request.query.order_by ?? 'room_name' });
  });

  app.get('/accounts/projects/:project_id/rooms/:room_name', {
    config: byName('see'),
    schema: { tags, summary: 'Fetch a room by name', params: ByName, response: { 200: schema.Room } },
  }, async (request) => service.roomView(await ctx.authority.resourceOf<RoomRow>(request)));

  app.put('/accounts/projects/:project_id/rooms/:room_id', {
    config: byId('update'),
    schema: { tags, summary: 'Rename or update a room (the id stays)', params: ById, body: schema.RoomUpdate, response: { 200: schema.Room } },
  }, async (request) => service.roomView(await service.updateRoom(ctx, request.params.project_id, request.params.room_id, request.body)));

  app.delete('/accounts/projects/:project_id/rooms/:room_id', {
    config: byId('delete'),
    schema: { tags, summary: 'Delete a room', params: ById, response: { 200: Ok } },
  }, async (request) => {
    await service.deleteRoom(ctx, request.params.project_id, request.params.room_id);
    return OK;
  });

  app.post('/accounts/projects/:project_id/rooms/:room_name/connect', {
    config: { auth: { ...byName('connect').auth, credentials: ['api_key', 'user', 'oauth'], oauthScope: 'rooms:connect' }, audit: false },
    schema: {
      tags, summary: 'Connection info for a room: a participant token and the room URL', params: ByName,
      body: EmptyBody, response: { 200: schema.RoomConnection },
      description: 'The token\'s `api` grant is what the caller may use in the room (docs/permissions.md, "Resource actions"): an `llm` surface only for holders of `llm_proxy_user`.',
    },
  }, async (request) => service.connectRoom(ctx, ctx.authority.actorOf(request), await ctx.authority.resourceOf<RoomRow>(request)));
}
