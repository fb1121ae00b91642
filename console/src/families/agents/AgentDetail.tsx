import { Button, Stack, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useNavigate, useParams } from 'react-router';
import { api, unwrap } from '../../api.ts';
import { invalidate, projectKey } from '../../app/query.ts';
import { useProject, useRights } from '../../app/project.tsx';
import { ConfirmButton, DetailHeader, Facts } from '../../ui/actions.tsx';
import { useConnect } from '../../ui/connect.tsx';
import { ErrorAlert, Json } from '../../ui/feedback.tsx';
import { formatTime } from '../../ui/format.ts';
import { FormModal, jsonValue } from '../../ui/FormModal.tsx';

export default function AgentDetail() {
  const { projectId, path } = useProject();
  const agentName = useParams().agentName!;
  const navigate = useNavigate();
  const [editing, setEditing] = useState(false);
  const byName = { params: { path: { project_id: projectId, agent_name: agentName } } };
  const agent = useQuery({ queryKey: projectKey(projectId, 'agents', agentName), queryFn: () => unwrap(api.GET('/accounts/projects/{project_id}/agents/{agent_name}', byName)) });
  const connect = useConnect({
    connect: () => unwrap(api.POST('/accounts/projects/{project_id}/agents/{agent_name}/connect', { ...byName, body: {} })),
    title: `Connect to ${agentName}`,
    fields: (connection) => [{ label: 'Agent URL', value: connection.agent_url }, { label: 'Token', value: connection.jwt }],
  });
  const may = useRights('agent', agent.data?.id);
  if (!agent.data) return <ErrorAlert error={agent.error} />;
  const byId = { params: { path: { project_id: projectId, agent_id: agent.data.id } } };
  return (
    <Stack>
      <DetailHeader
        title={agent.data.name}
        back={{ to: path('agents'), label: 'Managed agents' }}
        actions={(
          <>
            {may('connect') && connect.button}
            {may('update') && <Button variant="default" onClick={() => setEditing(true)}>Edit</Button>}
            {may('delete') && (
              <ConfirmButton label="Delete" title={`Delete agent ${agent.data.name}?`} message="The agent's configuration is deleted. This cannot be undone." onConfirm={async () => {
                await unwrap(api.DELETE('/accounts/projects/{project_id}/agents/{agent_id}', byId));
                await invalidate(projectKey(projectId, 'agents'));
                navigate(path('agents'));
              }} />
            )}
          </>
        )}
      />
      {connect.error}
      <Facts rows={[['Id', agent.data.id], ['Created', formatTime(agent.data.created_at)], ['Updated', formatTime(agent.data.updated_at)]]} />
      <Title order={4}>Configuration</Title>
      <Json value={agent.data.configuration} />
      {connect.dialog}
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
