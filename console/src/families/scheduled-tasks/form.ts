// A scheduled task's form: the spec's fields (docs/scheduled-tasks.md), sent as {spec, time_zone}.
import type { BodyOf, ResponseOf } from '../../api.ts';
import type { Field } from '../../ui/FormModal.tsx';
import { jsonValue } from '../../ui/FormModal.tsx';

export type Task = ResponseOf<'/accounts/projects/{project_id}/scheduled-tasks', 'get'>['tasks'][number];

export interface TaskValues extends Record<string, unknown> {
  name: string;
  schedule: string;
  time_zone: string;
  queue: string;
  payload: string;
  active: boolean;
  once: boolean;
}

export const TASK_FIELDS: Field[] = [
  { kind: 'text', name: 'name', label: 'Name (optional)' },
  { kind: 'text', name: 'schedule', label: 'Schedule', required: true, placeholder: '15 minutes, or 0 9 * * 1-5', description: 'A 5-field cron expression or an interval ("15 minutes", "1 hours").' },
  { kind: 'text', name: 'time_zone', label: 'Time zone', placeholder: 'UTC', description: 'The IANA zone the cron expression is read in; UTC when empty.' },
  { kind: 'text', name: 'queue', label: 'Queue', required: true, description: 'The room queue the message is sent to.' },
  { kind: 'json', name: 'payload', label: 'Payload (JSON object)' },
  { kind: 'switch', name: 'active', label: 'Active' },
  { kind: 'switch', name: 'once', label: 'Once (then inactive)' },
];

export const NEW_TASK: TaskValues = { name: '', schedule: '15 minutes', time_zone: '', queue: '', payload: '{}', active: true, once: false };

export function taskValues(task: Task): TaskValues {
  return {
    name: task.spec.metadata.name ?? '',
    schedule: task.schedule,
    time_zone: task.time_zone === 'UTC' ? '' : task.time_zone,
    queue: task.queue_name,
    payload: JSON.stringify(task.payload, null, 2),
    active: task.active,
    once: task.once,
  };
}

type Body = BodyOf<'/accounts/projects/{project_id}/scheduled-tasks/{task_id}', 'put'>;

/** The body of a create or replace; `kept` carries what the form does not show of the task being replaced. */
export function taskBody(values: TaskValues, kept?: Task): Body {
  const storageWritePath = kept?.storage_write_path;
  return {
    spec: {
      version: 'v1',
      kind: 'ScheduledTask',
      metadata: { name: values.name.trim() || null, annotations: kept?.annotations ?? {} },
      schedule: values.schedule.trim(),
      active: values.active,
      once: values.once,
      queue: { name: values.queue.trim(), payload: jsonValue(values.payload) ?? {}, ...(storageWritePath ? { storage_write_path: storageWritePath } : {}) },
    },
    ...(values.time_zone.trim() ? { time_zone: values.time_zone.trim() } : {}),
  };
}

export const taskName = (task: Task) => task.spec.metadata.name || task.queue_name;
