// Session reports from room servers: start and end. Room servers authenticate with a project API key
// (or a developer's token); the session read API builds on the same records.
import { Type } from 'typebox';
import type { Api } from '../../platform/http/module.ts';
import type { AppContext } from '../../context.ts';
import { ProjectParams, Uuid } from '../../platform/http/schemas.ts';
import * as schema from './schema.ts';
import * as service from './service.ts';

const tags = ['Sessions'];
const BySession = Type.Object({ project_id: Uuid, session_id: Uuid });

export function sessionRoutes(app: Api, ctx: AppContext): void {
  app.post('/accounts/projects/:project_id/sessions', {
    config: { auth: { permission: 'developer' } },
    schema: {
      tags, summary: 'Report that a room session started (room servers)', params: ProjectParams, body: schema.SessionStart,
      response: { 201: schema.RoomSession, 200: schema.RoomSession },
      description: 'Records the session and emits `room.started` to subscribed webhooks, in one transaction. 201 when recorded; 200 with the existing session when `session_id` was reported before (no second event); 409 when that id belongs to another room.',
    },
  }, async (request, reply) => {
    const { session, created } = await service.startSession(ctx, request.params.project_id, request.body);
    return reply.status(created ? 201 : 200).send(session);
  });

  app.post('/accounts/projects/:project_id/sessions/:session_id/end', {
    config: { auth: { permission: 'developer' } },
    schema: {
      tags, summary: 'Report that a room session ended (room servers)', params: BySession, body: Type.Union([schema.SessionEnd, Type.Null()], { description: 'Final participant counts, or no body' }),
      response: { 200: schema.RoomSession },
      description: 'Marks the session ended and emits `room.ended`, in one transaction. Reporting the end again returns the session unchanged, without a second event.',
    },
  }, async (request) => service.endSession(ctx, request.params.project_id, request.params.session_id, request.body ?? {}));
}
