// External OAuth registrations of the project and of one room: create, list, update, delete.
import type { Api } from '../../module.ts';
import type { AppContext } from '../../context.ts';
import { pageOf } from '../../platform/http/lists.ts';
import { Ok, OK, ProjectParams } from '../../platform/http/schemas.ts';
import { ACTS_IN_ROOM } from '../rooms/service.ts';
import * as schema from './schema.ts';
import * as service from './service.ts';

const tags = ['External OAuth'];
const project = '/accounts/projects/:project_id/external-oauth';
const room = '/accounts/projects/:project_id/rooms/:room_name/external-oauth';
const secretNote = 'The client secret (`client_secret` or `oauth.client_secret`) is stored encrypted and never returned.';

export function externalOAuthRoutes(app: Api, ctx: AppContext): void {
  app.post(project, {
    config: { auth: { permission: 'external_oauth_creator' } },
    schema: { tags, summary: 'Register an external OAuth provider for the project', params: ProjectParams, body: schema.RegistrationInput, response: { 201: schema.Registration }, description: secretNote },
  }, async (request, reply) => reply.status(201).send(await service.createRegistration(ctx, ctx.authority.actorOf(request), request.params.project_id, undefined, request.body)));

  app.get(project, {
    config: { auth: { permission: 'external_oauth_inventory' } },
    schema: {
      tags, summary: "List the project's external OAuth registrations", params: ProjectParams, querystring: schema.RegistrationListQuery,
      response: { 200: schema.RegistrationList }, description: '`filter` matches the client id. Rooms\' own registrations are listed under the room.',
    },
  }, async (request) => service.listRegistrations(ctx, request.params.project_id, undefined, pageOf(request.query), request.query.delegated_to));

  app.put(`${project}/:registration_id`, {
    config: { auth: { permission: 'external_oauth_manager' } },
    schema: { tags, summary: 'Replace an external OAuth registration of the project', params: schema.ProjectRegistrationParams, body: schema.RegistrationInput, response: { 200: schema.Registration }, description: secretNote },
  }, async (request) => service.updateRegistration(ctx, ctx.authority.actorOf(request), request.params.project_id, undefined, request.params.registration_id, request.body));

  app.delete(`${project}/:registration_id`, {
    config: { auth: { permission: 'external_oauth_manager' } },
    schema: { tags, summary: 'Delete an external OAuth registration of the project', params: schema.ProjectRegistrationParams, querystring: schema.DeleteQuery, response: { 200: Ok } },
  }, async (request) => {
    await service.deleteRegistration(ctx, request.params.project_id, undefined, request.params.registration_id, request.query.delegated_to);
    return OK;
  });

  // A room's registration signs its participants in upstream: writing one needs the writer's own access there.
  app.post(room, {
    config: { auth: { permission: 'external_oauth_creator', within: ACTS_IN_ROOM } },
    schema: { tags, summary: 'Register an external OAuth provider for one room', params: schema.RoomParams, body: schema.RegistrationInput, response: { 201: schema.Registration }, description: secretNote },
  }, async (request, reply) => reply.status(201).send(await service.createRegistration(ctx, ctx.authority.actorOf(request), request.params.project_id, request.params.room_name, request.body)));

  app.get(room, {
    config: { auth: { permission: 'external_oauth_inventory' } },
    schema: {
      tags, summary: "List a room's external OAuth registrations", params: schema.RoomParams, querystring: schema.RegistrationListQuery,
      response: { 200: schema.RegistrationList }, description: '`filter` matches the client id.',
    },
  }, async (request) => service.listRegistrations(ctx, request.params.project_id, request.params.room_name, pageOf(request.query), request.query.delegated_to));

  app.put(`${room}/:room_registration_id`, {
    config: { auth: { permission: 'external_oauth_manager', within: ACTS_IN_ROOM } },
    schema: { tags, summary: 'Replace an external OAuth registration of a room', params: schema.RoomRegistrationParams, body: schema.RegistrationInput, response: { 200: schema.Registration }, description: secretNote },
  }, async (request) => service.updateRegistration(ctx, ctx.authority.actorOf(request), request.params.project_id, request.params.room_name, request.params.room_registration_id, request.body));

  app.delete(`${room}/:room_registration_id`, {
    config: { auth: { permission: 'external_oauth_manager' } },
    schema: { tags, summary: 'Delete an external OAuth registration of a room', params: schema.RoomRegistrationParams, querystring: schema.DeleteQuery, response: { 200: Ok } },
  }, async (request) => {
    await service.deleteRegistration(ctx, request.params.project_id, request.params.room_name, request.params.room_registration_id, request.query.delegated_to);
    return OK;
  });
}
