// The project itself: what it is, whether it is enabled, whether its admins need a second factor, and
// its settings document.
import { Badge, Button, Group, Stack, Switch, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, unwrap } from '../../api.ts';
import { invalidate, projectKey } from '../../app/query.ts';
import { useProject } from '../../app/project.tsx';
import { Facts } from '../../ui/actions.tsx';
import { ErrorAlert, Json } from '../../ui/feedback.tsx';
import { formatTime } from '../../ui/format.ts';
import { FormModal, jsonValue } from '../../ui/FormModal.tsx';

export default function ProjectPage() {
  const { projectId, project, can } = useProject();
  const [editing, setEditing] = useState(false);
  const [policyFailure, setPolicyFailure] = useState<unknown>();
  const params = { params: { path: { project_id: projectId } } };
  const status = useQuery({ queryKey: projectKey(projectId, 'status'), queryFn: () => unwrap(api.GET('/accounts/projects/{project_id}/status', params)) });
  return (
    <Stack>
      <Group justify="space-between">
        <Group>
          <Title order={2}>{project.name}</Title>
          {status.data && <Badge color={status.data.enabled ? 'green' : 'gray'}>{status.data.enabled ? 'Enabled' : 'Disabled'}</Badge>}
        </Group>
        {can('admin') && <Button variant="default" onClick={() => setEditing(true)}>Edit settings</Button>}
      </Group>
      <Facts rows={[['Project id', project.id], ['Project key', project.project_key], ['Created', formatTime(project.created_at)]]} />
      <Switch
        label="Admins need a second factor"
        description="An admin without an authenticator app or passkey cannot act as an admin until they add one on their account page."
        checked={project.admins_need_second_factor}
        disabled={!can('admin')}
        onChange={async (event) => {
          setPolicyFailure(undefined);
          try {
            await unwrap(api.PUT('/accounts/projects/{project_id}/sign-in-policy', { ...params, body: { admins_need_second_factor: event.currentTarget.checked } }));
            await invalidate(projectKey(projectId));
          } catch (error) {
            setPolicyFailure(error);
          }
        }}
      />
      <ErrorAlert error={policyFailure} />
      <Title order={4}>Settings</Title>
      <Json value={project.settings} />
      <FormModal
        opened={editing}
        onClose={() => setEditing(false)}
        title="Project settings"
        fields={[{ kind: 'json', name: 'settings', label: 'Settings (JSON object)', required: true }]}
        initialValues={{ settings: JSON.stringify(project.settings, null, 2) }}
        submitLabel="Save settings"
        submit={async ({ settings }) => {
          await unwrap(api.PUT('/accounts/projects/{project_id}/settings', { ...params, body: jsonValue(settings) ?? {} }));
          await invalidate(projectKey(projectId));
        }}
      />
    </Stack>
  );
}
