// Project API keys: the value is shown once, at creation.
import { Badge, Button, Group } from '@mantine/core';
import { useState } from 'react';
import { api, unwrap, type ResponseOf, type Role } from '../../api.ts';
import { invalidate, projectKey } from '../../app/query.ts';
import { useProject } from '../../app/project.tsx';
import { ConfirmButton } from '../../ui/actions.tsx';
import { ShownOnce } from '../../ui/feedback.tsx';
import { formatTime } from '../../ui/format.ts';
import { FormModal } from '../../ui/FormModal.tsx';
import { ListPage, pageLocally } from '../../ui/ListPage.tsx';

type ApiKey = ResponseOf<'/accounts/projects/{project_id}/api-keys', 'get'>['keys'][number];

export default function ApiKeyList() {
  const { projectId } = useProject();
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<string>();
  const key = projectKey(projectId, 'api-keys');
  const params = { params: { path: { project_id: projectId } } };
  return (
    <>
      <ListPage<ApiKey>
        title="API keys"
        description="Keys act for this project: as an admin, or with the roles they were created with."
        queryKey={key}
        filterLabel="Filter by name or description"
        load={async (page) => pageLocally((await unwrap(api.GET('/accounts/projects/{project_id}/api-keys', { params: { ...params.params, query: page.filter ? { filter: page.filter } : {} } }))).keys, page)}
        columns={[
          { header: 'Name', cell: (k) => k.name },
          { header: 'Description', cell: (k) => k.description || '—' },
          { header: 'Roles', cell: (k) => <Group gap={4}>{(k.roles ?? ['admin']).map((role) => <Badge key={role} variant="light">{role}</Badge>)}</Group> },
          { header: 'Created', cell: (k) => formatTime(k.created_at) },
          {
            header: 'Actions',
            cell: (k) => (
              <ConfirmButton label="Revoke" title={`Revoke ${k.name}?`} message="Requests with this key fail from now on. This cannot be undone." onConfirm={async () => {
                await unwrap(api.DELETE('/accounts/projects/{project_id}/api-keys/{id}', { params: { path: { project_id: projectId, id: k.id } } }));
                await invalidate(key);
              }} />
            ),
          },
        ]}
        rowKey={(k) => k.id}
        actions={<Button onClick={() => setCreating(true)}>New API key</Button>}
        empty="No API keys yet."
      />
      <FormModal
        opened={creating}
        onClose={() => setCreating(false)}
        title="New API key"
        fields={[
          { kind: 'text', name: 'name', label: 'Name', required: true },
          { kind: 'textarea', name: 'description', label: 'Description' },
          { kind: 'roles', name: 'roles', label: 'Roles', description: 'Leave empty for a key that acts as a project admin.' },
        ]}
        initialValues={{ name: '', description: '', roles: [] as Role[] }}
        submitLabel="Create key"
        submit={async ({ name, description, roles }) => {
          const result = await unwrap(api.POST('/accounts/projects/{project_id}/api-keys', { ...params, body: { name, description, roles: roles.length > 0 ? roles : null } }));
          await invalidate(key);
          setCreated(result.value);
        }}
      />
      <ShownOnce title="Your new API key" label="API key" value={created} onClose={() => setCreated(undefined)} />
    </>
  );
}
