// Scheduled tasks of rooms: create (spec or earlier flat body), list, replace, delete, and the runs.
import { Type } from 'typebox';
import type { Api } from '../../module.ts';
import type { AppContext } from '../../context.ts';
import { pageOf } from '../../platform/http/lists.ts';
import { ProjectParams, Uuid } from '../../platform/http/schemas.ts';
import { RoomName } from '../rooms/schema.ts';
import { ACTS_IN_ROOM } from '../rooms/service.ts';
import * as schema from './schema.ts';
import * as service from './service.ts';

const tags = ['Scheduled tasks'];
const ByRoom = Type.Object({ project_id: Uuid, room_name: RoomName });
const ByTask = Type.Object({ project_id: Uuid, task_id: Uuid });

export function scheduledTaskRoutes(app: Api, ctx: AppContext): void {
  // A task's runs send messages into its room: creating, changing or moving one needs the caller's own access there.
  app.post('/accounts/projects/:project_id/rooms/:room_name/scheduled-tasks', {
    config: { auth: { permission: 'scheduled_task_creator', within: ACTS_IN_ROOM } },
    schema: {
      tags, summary: 'Schedule a queued message for a room', params: ByRoom, body: schema.TaskWrite, response: { 201: schema.CreatedTask },
      description: 'Body: `{"spec": ScheduledTaskSpec, "time_zone"?}`, or the earlier flat fields (`queue_name`, `payload`, `schedule`, `active`, `once`, `annotations`, `storage_write_path`, `id`). `schedule` is a 5-field cron expression or an interval like "15 minutes"; an invalid one, or one more frequent than ATRIUM_SCHEDULED_TASKS_MIN_PERIOD_SECONDS, is a 400 naming the problem. The room must exist. Answers the task with `task_id`.',
    },
  }, async (request, reply) => reply.status(201).send(await service.createTask(ctx, ctx.authority.actorOf(request), request.params.project_id, request.params.room_name, request.body)));

  app.post('/accounts/projects/:project_id/scheduled-tasks', {
    config: { auth: { permission: 'scheduled_task_creator', within: ACTS_IN_ROOM } },
    schema: {
      tags, summary: 'Schedule a queued message (earlier flat form)', params: ProjectParams, body: schema.FlatTaskCreate, response: { 201: schema.CreatedTask },
      description: 'The project-level create of earlier SDKs: the flat fields with `room_name`. Otherwise as the room-scoped create.',
    },
  }, async (request, reply) => reply.status(201).send(await service.createTask(ctx, ctx.authority.actorOf(request), request.params.project_id, request.body.room_name, request.body)));

  app.get('/accounts/projects/:project_id/scheduled-tasks', {
    config: { auth: { permission: 'scheduled_task_inventory' } },
    schema: { tags, summary: 'List scheduled tasks, oldest first', params: ProjectParams, querystring: schema.TaskListQuery, response: { 200: schema.TaskList } },
  }, async (request) => {
    const { room_id: roomId, task_id: taskId, active, page_size: pageSize } = request.query;
    const page = pageOf({ ...request.query, limit: pageSize ?? request.query.limit });
    return service.listTasks(ctx, request.params.project_id, { roomId, taskId, active }, page);
  });

  app.put('/accounts/projects/:project_id/scheduled-tasks/:task_id', {
    config: { auth: { permission: 'scheduled_task_manager', within: ACTS_IN_ROOM } },
    schema: {
      tags, summary: 'Replace a scheduled task', params: ByTask, body: schema.TaskWrite, response: { 200: schema.ScheduledTask },
      description: '`{"spec": …}` replaces the task; the flat form changes only the fields it names. A changed schedule, time zone, `once` or `active` restarts the schedule from now. Runs already fired keep their message.',
    },
  }, async (request) => service.updateTask(ctx, ctx.authority.actorOf(request), request.params.project_id, request.params.task_id, request.body));

  app.delete('/accounts/projects/:project_id/scheduled-tasks/:task_id', {
    config: { auth: { permission: 'scheduled_task_manager' } },
    schema: {
      tags, summary: 'Delete a scheduled task', params: ByTask, response: { 204: Type.Null({ description: 'Deleted' }) },
      description: 'No further runs fire; a run already fired is still delivered.',
    },
  }, async (request, reply) => {
    await service.deleteTask(ctx, request.params.project_id, request.params.task_id);
    return reply.status(204).send(null);
  });

  app.get('/accounts/projects/:project_id/scheduled-tasks/:task_id/runs', {
    config: { auth: { permission: 'scheduled_task_inventory' } },
    schema: { tags, summary: 'Runs of a scheduled task, newest first', params: ByTask, querystring: schema.RunListQuery, response: { 200: schema.RunList } },
  }, async (request) => service.listRuns(ctx, request.params.project_id, request.params.task_id, request.query.status, pageOf(request.query)));
}
