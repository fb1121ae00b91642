// Sessions: what room servers report (start, end, participants; OTLP telemetry in otlp-routes.ts),
// and what owners read (active and recent sessions, one session with its events, spans, metrics and
// participants) and do (terminate). Room servers authenticate with a project API key holding the
// `room_server` role (docs/room-servers.md).
import { Type } from 'typebox';
import type { Api } from '../../module.ts';
import type { AppContext } from '../../context.ts';
import { pageOf } from '../../platform/http/lists.ts';
import { EmptyBody, ProjectParams, Uuid } from '../../platform/http/schemas.ts';
import { otlpRoutes } from './otlp-routes.ts';
import * as schema from './schema.ts';
import * as service from './service.ts';

const roomServer = [schema.ROOM_SERVER_TAG];
const tags = ['Sessions'];
const BySession = Type.Object({ project_id: Uuid, session_id: Uuid });

export async function sessionRoutes(app: Api, ctx: AppContext): Promise<void> {
  // Reports from room servers.
  app.post('/accounts/projects/:project_id/sessions', {
    config: { auth: { permission: 'room_server' } },
    schema: {
      tags: roomServer, summary: 'Report that a session started', params: ProjectParams, body: schema.SessionStart,
      response: { 201: schema.RoomSession, 200: schema.RoomSession },
      description: 'Records the session and emits `room.started` to subscribed webhooks, in one transaction. 201 when recorded; 200 with the existing session when `session_id` was reported before (no second event); 409 when the project has a session of that id in another room. Ids are the project\'s own: another project\'s session of the same id is another session.',
    },
  }, async (request, reply) => {
    const { session, created } = await service.startSession(ctx, request.params.project_id, request.body);
    return reply.status(created ? 201 : 200).send(session);
  });

  app.post('/accounts/projects/:project_id/sessions/:session_id/end', {
    config: { auth: { permission: 'room_server' } },
    schema: {
      tags: roomServer, summary: 'Report that a session ended', params: BySession, body: Type.Union([schema.SessionEnd, Type.Null()], { description: 'Final participant counts, or no body' }),
      response: { 200: schema.RoomSession },
      description: 'Marks the session ended (`ended_reason` `terminated` when a terminate request came first, else `reported`) and emits `room.ended`, in one transaction. Reporting the end again returns the session unchanged, without a second event.',
    },
  }, async (request) => service.endSession(ctx, request.params.project_id, request.params.session_id, request.body ?? {}));

  app.post('/accounts/projects/:project_id/sessions/:session_id/participants', {
    config: { auth: { permission: 'room_server' } },
    schema: {
      tags: roomServer, summary: 'Report participants joining and leaving a session', params: BySession, body: schema.ParticipantReport,
      response: { 200: schema.ParticipantCounts },
      description: 'Each join and leave becomes a session event; a participant joins once and leaves once (repeats change nothing). The counts by role count everyone who joined; `active` those present now. Joining an ended session is a 409.',
    },
  }, async (request) => service.reportParticipants(ctx, request.params.project_id, request.params.session_id, request.body.events));

  await app.register(async (scope) => otlpRoutes(scope as unknown as Api, ctx));

  // What owners read and do.
  app.get('/accounts/projects/:project_id/sessions/active', {
    config: { auth: { permission: 'session_inventory' } },
    schema: { tags, summary: 'Running sessions, newest first', params: ProjectParams, querystring: schema.ActiveSessionsQuery, response: { 200: schema.SessionList } },
  }, async (request) => service.listSessions(ctx, request.params.project_id, { active: true }, pageOf(request.query)));

  app.get('/accounts/projects/:project_id/sessions', {
    config: { auth: { permission: 'session_inventory' } },
    schema: { tags, summary: 'Recent sessions, newest first', params: ProjectParams, querystring: schema.RecentSessionsQuery, response: { 200: schema.SessionList } },
  }, async (request) => service.listSessions(ctx, request.params.project_id, { roomId: request.query.room_id, roomName: request.query.room_name }, pageOf(request.query)));

  app.get('/accounts/projects/:project_id/agents/sessions/active', {
    config: { auth: { permission: 'session_inventory' } },
    schema: { tags, summary: 'Running sessions of managed agents, newest first', params: ProjectParams, querystring: schema.ActiveAgentSessionsQuery, response: { 200: schema.SessionList } },
  }, async (request) => service.listSessions(ctx, request.params.project_id, { active: true, kind: 'agent' }, pageOf(request.query)));

  app.get('/accounts/projects/:project_id/agents/sessions', {
    config: { auth: { permission: 'session_inventory' } },
    schema: { tags, summary: 'Recent sessions of managed agents, newest first', params: ProjectParams, querystring: schema.AgentSessionsQuery, response: { 200: schema.SessionList } },
  }, async (request) => service.listSessions(ctx, request.params.project_id, { kind: 'agent', agentId: request.query.agent_id }, pageOf(request.query)));

  app.get('/accounts/projects/:project_id/sessions/:session_id', {
    config: { auth: { permission: 'session_inventory' } },
    schema: { tags, summary: 'Fetch a session', params: BySession, response: { 200: schema.RoomSession } },
  }, async (request) => service.getSession(ctx, request.params.project_id, request.params.session_id));

  app.get('/accounts/projects/:project_id/sessions/:session_id/participants', {
    config: { auth: { permission: 'session_inventory' } },
    schema: { tags, summary: 'Participant counts of a session, by role', params: BySession, response: { 200: schema.ParticipantCounts } },
  }, async (request) => service.getParticipants(ctx, request.params.project_id, request.params.session_id));

  app.get('/accounts/projects/:project_id/sessions/:session_id/events', {
    config: { auth: { permission: 'session_inventory' } },
    schema: { tags, summary: 'Events of a session (its log records and what happened to it), oldest first', params: BySession, querystring: schema.EventsQuery, response: { 200: schema.EventList } },
  }, async (request) => {
    const { type } = request.query;
    const { items, total } = await service.sessionTelemetry(ctx, request.params.project_id, request.params.session_id, 'events', pageOf(request.query), type ? { column: 'type', value: type } : undefined);
    return { events: items, total };
  });

  app.get('/accounts/projects/:project_id/sessions/:session_id/spans', {
    config: { auth: { permission: 'session_inventory' } },
    schema: { tags, summary: 'Spans of a session, by start time', params: BySession, querystring: schema.SpansQuery, response: { 200: schema.SpanList } },
  }, async (request) => {
    const traceId = request.query.trace_id?.toLowerCase();
    const { items, total } = await service.sessionTelemetry(ctx, request.params.project_id, request.params.session_id, 'spans', pageOf(request.query), traceId ? { column: 'trace_id', value: traceId } : undefined);
    return { spans: items, total };
  });

  app.get('/accounts/projects/:project_id/sessions/:session_id/metrics', {
    config: { auth: { permission: 'session_inventory' } },
    schema: { tags, summary: 'Metric data points of a session, by time', params: BySession, querystring: schema.MetricsQuery, response: { 200: schema.MetricList } },
  }, async (request) => {
    const { name } = request.query;
    const { items, total } = await service.sessionTelemetry(ctx, request.params.project_id, request.params.session_id, 'metrics', pageOf(request.query), name ? { column: 'name', value: name } : undefined);
    return { metrics: items, total };
  });

  app.post('/accounts/projects/:project_id/sessions/:session_id/terminate', {
    config: { auth: { permission: 'developer' } },
    schema: {
      tags, summary: 'Terminate a session', params: BySession, body: EmptyBody,
      response: { 204: Type.Null({ description: 'Requested (or nothing to do)' }) },
      description: 'Marks the session `terminating` and asks the room server to end it (a signed call through the outbox, retried; its status is the session\'s `termination`). The session ends when the room server reports the end, or after ATRIUM_SESSION_TERMINATE_TIMEOUT_SECONDS with `ended_reason: "terminate_timeout"`. Terminating an ended or terminating session changes nothing.',
    },
  }, async (request, reply) => {
    await service.terminateSession(ctx, request.params.project_id, request.params.session_id);
    return reply.status(204).send(null);
  });
}
