// The read path of room servers (docs/room-servers.md): one room's services, secrets and mailboxes,
// for a credential with the room_server role. Route resolution by domain is the routes module's
// GET /api/routes/resolve.
import type { Api } from '../../module.ts';
import type { AppContext } from '../../context.ts';
import * as schema from './schema.ts';
import * as service from './service.ts';

const tags = ['Room servers'];
const base = '/accounts/projects/:project_id/rooms/:room_name/server';

export function roomServerRoutes(app: Api, ctx: AppContext): void {
  app.get(`${base}/services`, {
    config: { auth: { permission: 'room_server' } },
    schema: {
      tags, summary: 'The services a room runs: the project\'s and its own, templates rendered', params: schema.RoomParams, response: { 200: schema.RoomServices },
      description: 'A room service shadows a project service of the same name. Values of obscure template variables are in place: this is the only answer that shows them.',
    },
  }, async (request) => service.roomServices(ctx, request.params.project_id, request.params.room_name));

  app.get(`${base}/secrets`, {
    config: { auth: { permission: 'room_server' } },
    schema: {
      tags, summary: 'The secrets a room needs for one identity, decrypted', params: schema.RoomParams, querystring: schema.SecretsQuery, response: { 200: schema.RoomSecrets },
      description: "The project secrets the room's services refer to (container `secrets`, `pull_secret`, environment values from secrets), and the room's secrets for the whole room, for `for_identity`, or delegated to it.",
    },
  }, async (request) => service.roomSecrets(ctx, request.params.project_id, request.params.room_name, request.query.for_identity));

  app.get(`${base}/mailboxes`, {
    config: { auth: { permission: 'room_server' } },
    schema: { tags, summary: "A room's mailboxes", params: schema.RoomParams, response: { 200: schema.RoomMailboxes } },
  }, async (request) => service.roomMailboxes(ctx, request.params.project_id, request.params.room_name));
}
