import { Button, Stack, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useNavigate, useParams } from 'react-router';
import { ApiError, api, unwrap, type ResponseOf } from '../../api.ts';
import { every } from '../../ui/exhaustive.ts';
import { invalidate, projectKey } from '../../app/query.ts';
import { useProject } from '../../app/project.tsx';
import { ConfirmButton, DetailHeader, Facts } from '../../ui/actions.tsx';
import { ErrorAlert, Json } from '../../ui/feedback.tsx';
import { formatTime } from '../../ui/format.ts';
import { FormModal } from '../../ui/FormModal.tsx';
import { ListPage } from '../../ui/ListPage.tsx';
import { TASK_FIELDS, taskBody, taskName, taskValues } from './form.ts';

type Run = ResponseOf<'/accounts/projects/{project_id}/scheduled-tasks/{task_id}/runs', 'get'>['runs'][number];
type RunState = Run['status'];

const RUN_STATES = every<RunState>()(['pending', 'submitting', 'submitted', 'retrying', 'failed']);

export default function TaskDetail() {
  const { projectId, can, path } = useProject();
  const taskId = useParams().taskId!;
  const navigate = useNavigate();
  const [editing, setEditing] = useState(false);
  const byId = { params: { path: { project_id: projectId, task_id: taskId } } };
  const task = useQuery({
    queryKey: projectKey(projectId, 'scheduled-tasks', taskId),
    queryFn: async () => {
      const page = await unwrap(api.GET('/accounts/projects/{project_id}/scheduled-tasks', { params: { path: { project_id: projectId }, query: { task_id: taskId } } }));
      const found = page.tasks[0];
      if (!found) throw new ApiError(404, { error: { code: 'not_found', message: 'Scheduled task not found' } });
      return found;
    },
  });
  if (!task.data) return <ErrorAlert error={task.error} />;
  const current = task.data;
  return (
    <Stack>
      <DetailHeader
        title={taskName(current)}
        back={{ to: path('scheduled-tasks'), label: 'Scheduled tasks' }}
        actions={can('scheduled_task_manager') && (
          <>
            <Button variant="default" onClick={() => setEditing(true)}>Edit</Button>
            <ConfirmButton label="Delete" title={`Delete task ${taskName(current)}?`} message="No later run fires; runs already fired keep their message." onConfirm={async () => {
              await unwrap(api.DELETE('/accounts/projects/{project_id}/scheduled-tasks/{task_id}', byId));
              await invalidate(projectKey(projectId, 'scheduled-tasks'));
              navigate(path('scheduled-tasks'));
            }} />
          </>
        )}
      />
      <Facts rows={[
        ['Id', current.id],
        ['Room', current.room_name],
        ['Schedule', current.schedule],
        ['Time zone', current.time_zone],
        ['Queue', current.queue_name],
        ['Active', current.active ? (current.once ? 'yes, once' : 'yes') : 'no'],
        ['Next run', formatTime(current.next_run_at)],
        ['Last run', current.last_status ? `${current.last_status} at ${formatTime(current.last_start_time)}${current.last_return_message ? `: ${current.last_return_message}` : ''}` : '—'],
      ]} />
      <Title order={4}>Payload</Title>
      <Json value={current.payload} />
      <ListPage<Run>
        title="Runs"
        refetchInterval={5_000}
        queryKey={projectKey(projectId, 'scheduled-tasks', taskId, 'runs')}
        filterLabel="State"
        filterOptions={RUN_STATES}
        load={async ({ offset, limit, filter }) => {
          const page = await unwrap(api.GET('/accounts/projects/{project_id}/scheduled-tasks/{task_id}/runs', { params: { ...byId.params, query: { offset, limit, ...(filter ? { status: filter as RunState } : {}) } } }));
          return { items: page.runs, total: page.total };
        }}
        columns={[
          { header: 'Due', cell: (run) => formatTime(run.scheduled_time) },
          { header: 'Status', cell: (run) => run.status },
          { header: 'Attempts', cell: (run) => run.attempt_count },
          { header: 'Completed', cell: (run) => formatTime(run.completed_at) },
          { header: 'Error', cell: (run) => run.error ?? '—' },
        ]}
        rowKey={(run) => run.id}
        empty="No runs yet."
      />
      <FormModal
        key={current.updated_at}
        opened={editing}
        onClose={() => setEditing(false)}
        title="Edit scheduled task"
        fields={TASK_FIELDS}
        initialValues={taskValues(current)}
        submitLabel="Save"
        submit={async (values) => {
          await unwrap(api.PUT('/accounts/projects/{project_id}/scheduled-tasks/{task_id}', { ...byId, body: taskBody(values, current) }));
          await invalidate(projectKey(projectId, 'scheduled-tasks'));
        }}
      />
    </Stack>
  );
}
