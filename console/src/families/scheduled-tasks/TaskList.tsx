import { Badge, Button } from '@mantine/core';
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { api, unwrap } from '../../api.ts';
import { invalidate, projectKey } from '../../app/query.ts';
import { useProject } from '../../app/project.tsx';
import { formatTime } from '../../ui/format.ts';
import { FormModal, type Field } from '../../ui/FormModal.tsx';
import { ListPage } from '../../ui/ListPage.tsx';
import { NEW_TASK, TASK_FIELDS, taskBody, taskName, type Task, type TaskValues } from './form.ts';

const CREATE_FIELDS: Field[] = [{ kind: 'room', name: 'room', label: 'Room', required: true, description: 'The room the messages go to.' }, ...TASK_FIELDS];

export default function TaskList() {
  const { projectId, can, path } = useProject();
  const navigate = useNavigate();
  const [creating, setCreating] = useState(false);
  return (
    <>
      <ListPage<Task>
        title="Scheduled tasks"
        description="Messages sent to a room's queue on a schedule; each due time fires once."
        queryKey={projectKey(projectId, 'scheduled-tasks')}
        filterLabel="Filter by name, queue or room"
        load={async ({ offset, limit, filter }) => {
          const page = await unwrap(api.GET('/accounts/projects/{project_id}/scheduled-tasks', { params: { path: { project_id: projectId }, query: { offset, limit, ...(filter ? { filter } : {}) } } }));
          return { items: page.tasks, total: page.total };
        }}
        columns={[
          { header: 'Name', cell: taskName },
          { header: 'Room', cell: (task) => task.room_name },
          { header: 'Schedule', cell: (task) => `${task.schedule}${task.time_zone !== 'UTC' ? ` (${task.time_zone})` : ''}` },
          { header: 'Active', cell: (task) => <Badge variant="light" color={task.active ? 'green' : 'gray'}>{task.active ? 'active' : 'inactive'}</Badge> },
          { header: 'Next run', cell: (task) => formatTime(task.next_run_at) },
          { header: 'Last run', cell: (task) => task.last_status ?? '—' },
        ]}
        rowKey={(task) => task.id}
        rowLink={(task) => path(`scheduled-tasks/${task.id}`)}
        actions={can('scheduled_task_creator') && <Button onClick={() => setCreating(true)}>New scheduled task</Button>}
        empty="No scheduled tasks yet."
      />
      <FormModal<TaskValues & { room: string }>
        opened={creating}
        onClose={() => setCreating(false)}
        title="New scheduled task"
        fields={CREATE_FIELDS}
        initialValues={{ room: '', ...NEW_TASK }}
        submitLabel="Create task"
        submit={async (values) => {
          const task = await unwrap(api.POST('/accounts/projects/{project_id}/rooms/{room_name}/scheduled-tasks', { params: { path: { project_id: projectId, room_name: values.room.trim() } }, body: taskBody(values) }));
          await invalidate(projectKey(projectId, 'scheduled-tasks'));
          navigate(path(`scheduled-tasks/${task.id}`));
        }}
      />
    </>
  );
}
