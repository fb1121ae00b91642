import { Button } from '@mantine/core';
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { api, unwrap, type ResponseOf } from '../../api.ts';
import { invalidate, projectKey } from '../../app/query.ts';
import { useProject } from '../../app/project.tsx';
import { formatTime } from '../../ui/format.ts';
import { FormModal, jsonValue } from '../../ui/FormModal.tsx';
import { ListPage } from '../../ui/ListPage.tsx';

type Agent = ResponseOf<'/accounts/projects/{project_id}/agents', 'get'>['agents'][number];

export const AGENT_TEMPLATE = JSON.stringify({ version: 'v1', kind: 'ManagedAgent', metadata: { name: '' } }, null, 2);

export default function AgentList() {
  const { projectId, can, path } = useProject();
  const navigate = useNavigate();
  const [creating, setCreating] = useState(false);
  return (
    <>
      <ListPage<Agent>
        title="Managed agents"
        queryKey={projectKey(projectId, 'agents')}
        load={async ({ offset, limit, filter }) => {
          const page = await unwrap(api.GET('/accounts/projects/{project_id}/agents', { params: { path: { project_id: projectId }, query: { offset, count: limit, ...(filter ? { filter } : {}) } } }));
          return { items: page.agents, total: page.total };
        }}
        columns={[
          { header: 'Name', cell: (agent) => agent.name },
          { header: 'Kind', cell: (agent) => String(agent.configuration.kind ?? '—') },
          { header: 'Updated', cell: (agent) => formatTime(agent.updated_at) },
        ]}
        rowKey={(agent) => agent.id}
        rowLink={(agent) => path(`agents/${encodeURIComponent(agent.name)}`)}
        actions={can('agent_creator') && <Button onClick={() => setCreating(true)}>New agent</Button>}
        empty="No managed agents yet."
      />
      <FormModal
        opened={creating}
        onClose={() => setCreating(false)}
        title="New managed agent"
        fields={[{ kind: 'json', name: 'configuration', label: 'Configuration (a ManagedAgent spec; its name is metadata.name)', required: true }]}
        initialValues={{ configuration: AGENT_TEMPLATE }}
        submitLabel="Create agent"
        submit={async ({ configuration }) => {
          const agent = await unwrap(api.POST('/accounts/projects/{project_id}/agents', { params: { path: { project_id: projectId } }, body: { configuration: jsonValue(configuration) ?? {} } }));
          await invalidate(projectKey(projectId, 'agents'));
          navigate(path(`agents/${encodeURIComponent(agent.name)}`));
        }}
      />
    </>
  );
}
