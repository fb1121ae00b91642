import { Button, Group, Modal, Stack, Title } from '@mantine/core';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useNavigate, useParams } from 'react-router';
import { api, unwrap, type ResponseOf } from '../../api.ts';
import { invalidate, projectKey } from '../../app/query.ts';
import { useProject } from '../../app/project.tsx';
import { ConfirmButton, DetailHeader, Facts } from '../../ui/actions.tsx';
import { CopyField, ErrorAlert, Json } from '../../ui/feedback.tsx';
import { formatTime } from '../../ui/format.ts';
import { FormModal, jsonValue } from '../../ui/FormModal.tsx';

type Connection = ResponseOf<'/accounts/projects/{project_id}/agents/{agent_name}/connect', 'post'>;

export default function AgentDetail() {
  const { projectId, can, path } = useProject();
  const agentName = useParams().agentName!;
  const navigate = useNavigate();
  const [editing, setEditing] = useState(false);
  const [connection, setConnection] = useState<Connection>();
  const byName = { params: { path: { project_id: projectId, agent_name: agentName } } };
  const agent = useQuery({ queryKey: projectKey(projectId, 'agents', agentName), queryFn: () => unwrap(api.GET('/accounts/projects/{project_id}/agents/{agent_name}', byName)) });
  const connect = useMutation({ mutationFn: () => unwrap(api.POST('/accounts/projects/{project_id}/agents/{agent_name}/connect', { ...byName, body: {} })), onSuccess: setConnection });
  if (!agent.data) return <ErrorAlert error={agent.error} />;
  const byId = { params: { path: { project_id: projectId, agent_id: agent.data.id } } };
  return (
    <Stack>
      <DetailHeader
        title={agent.data.name}
        back={{ to: path('agents'), label: 'Managed agents' }}
        actions={(
          <>
            <Button onClick={() => connect.mutate()} loading={connect.isPending}>Connect</Button>
            {can('developer') && <Button variant="default" onClick={() => setEditing(true)}>Edit</Button>}
            {can('developer') && (
              <ConfirmButton label="Delete" title={`Delete agent ${agent.data.name}?`} message="The agent's configuration is deleted. This cannot be undone." onConfirm={async () => {
                await unwrap(api.DELETE('/accounts/projects/{project_id}/agents/{agent_id}', byId));
                await invalidate(projectKey(projectId, 'agents'));
                navigate(path('agents'));
              }} />
            )}
          </>
        )}
      />
      <ErrorAlert error={connect.error} title="Could not connect" />
      <Facts rows={[['Id', agent.data.id], ['Created', formatTime(agent.data.created_at)], ['Updated', formatTime(agent.data.updated_at)]]} />
      <Title order={4}>Configuration</Title>
      <Json value={agent.data.configuration} />
      <Modal opened={connection !== undefined} onClose={() => setConnection(undefined)} title={`Connect to ${agentName}`} size="lg">
        {connection && (
          <Stack>
            <CopyField label="Agent URL" value={connection.agent_url} />
            <CopyField label="Token" value={connection.jwt} />
            <Group justify="flex-end"><Button onClick={() => setConnection(undefined)}>Done</Button></Group>
          </Stack>
        )}
      </Modal>
      <FormModal
        opened={editing}
        onClose={() => setEditing(false)}
        title="Edit agent"
        fields={[{ kind: 'json', name: 'configuration', label: 'Configuration', required: true }]}
        initialValues={{ configuration: JSON.stringify(agent.data.configuration, null, 2) }}
        submitLabel="Save"
        submit={async ({ configuration }) => {
          const updated = await unwrap(api.PUT('/accounts/projects/{project_id}/agents/{agent_id}', { ...byId, body: { configuration: jsonValue(configuration) ?? {} } }));
          await invalidate(projectKey(projectId, 'agents'));
          if (updated.name !== agentName) navigate(path(`agents/${encodeURIComponent(updated.name)}`), { replace: true });
        }}
      />
    </Stack>
  );
}
