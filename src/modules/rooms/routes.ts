// Rooms: create, list, fetch by name, update and delete by id, and connect.
import { Type } from 'typebox';
import type { Api } from '../../module.ts';
import type { AppContext } from '../../context.ts';
import { pageOf } from '../../platform/http/lists.ts';
import { EmptyBody, Ok, OK, ProjectParams, Uuid } from '../../platform/http/schemas.ts';
import { accessOf, callerOf } from '../../platform/http/auth.ts';
import * as schema from './schema.ts';
import * as service from './service.ts';

const ByName = Type.Object({ project_id: Uuid, room_name: schema.RoomName });
const ById = Type.Object({ project_id: Uuid, room_id: Uuid });
const tags = ['Rooms'];

export function roomRoutes(app: Api, ctx: AppContext): void {
  app.post('/accounts/projects/:project_id/rooms', {
    config: { auth: { permission: 'room_creator' } },
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
    config: { auth: { permission: 'member' } },
    schema: { tags, summary: 'Fetch a room by name', params: ByName, response: { 200: schema.Room } },
  }, async (request) => service.roomView(await service.getRoom(ctx, request.params.project_id, request.params.room_name)));

  app.put('/accounts/projects/:project_id/rooms/:room_id', {
    config: { auth: { permission: 'developer' } },
    schema: { tags, summary: 'Rename or update a room (the id stays)', params: ById, body: schema.RoomUpdate, response: { 200: schema.Room } },
  }, async (request) => service.roomView(await service.updateRoom(ctx, request.params.project_id, request.params.room_id, request.body)));

  app.delete('/accounts/projects/:project_id/rooms/:room_id', {
    config: { auth: { permission: 'developer' } },
    schema: { tags, summary: 'Delete a room', params: ById, response: { 200: Ok } },
  }, async (request) => {
    await service.deleteRoom(ctx, request.params.project_id, request.params.room_id);
    return OK;
  });

  app.post('/accounts/projects/:project_id/rooms/:room_name/connect', {
    config: { auth: { permission: 'member', credentials: ['api_key', 'user', 'oauth'], oauthScope: 'rooms:connect' } },
    schema: {
      tags, summary: 'Connection info for a room: a participant token and the room URL', params: ByName,
      body: EmptyBody, response: { 200: schema.RoomConnection },
    },
  }, async (request) => service.connectRoom(ctx, callerOf(request), accessOf(request), request.params.room_name));
}
