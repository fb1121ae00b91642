import { Button } from '@mantine/core';
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { api, unwrap } from '../../api.ts';
import { invalidate, projectKey } from '../../app/query.ts';
import { useProject } from '../../app/project.tsx';
import { formatTime } from '../../ui/format.ts';
import { FormModal } from '../../ui/FormModal.tsx';
import { ListPage } from '../../ui/ListPage.tsx';
import { REPOSITORY_FIELDS, repositoryBody, type Repository } from './form.ts';

export default function RepositoryList() {
  const { projectId, can, path } = useProject();
  const navigate = useNavigate();
  const [creating, setCreating] = useState(false);
  return (
    <>
      <ListPage<Repository>
        title="Image repositories"
        description="The project's image repositories; registry tokens for them let clients push and pull."
        queryKey={projectKey(projectId, 'repositories')}
        load={async ({ offset, limit, filter }) => {
          const page = await unwrap(api.GET('/accounts/projects/{project_id}/repositories', { params: { path: { project_id: projectId }, query: { offset, count: limit, ...(filter ? { filter } : {}) } } }));
          return { items: page.repositories, total: page.total };
        }}
        columns={[
          { header: 'Name', cell: (repository) => repository.name },
          { header: 'In the registry', cell: (repository) => repository.registry_name },
          { header: 'Description', cell: (repository) => repository.description || '—' },
          { header: 'Updated', cell: (repository) => formatTime(repository.updated_at) },
        ]}
        rowKey={(repository) => repository.id}
        rowLink={(repository) => path(`repositories/${repository.id}`)}
        actions={can('repository_creator') && <Button onClick={() => setCreating(true)}>New repository</Button>}
        empty="No repositories yet."
      />
      <FormModal
        opened={creating}
        onClose={() => setCreating(false)}
        title="New repository"
        fields={REPOSITORY_FIELDS}
        initialValues={{ name: '', description: '', annotations: '' }}
        submitLabel="Create repository"
        submit={async (values) => {
          const repository = await unwrap(api.POST('/accounts/projects/{project_id}/repositories', { params: { path: { project_id: projectId } }, body: repositoryBody(values) }));
          await invalidate(projectKey(projectId, 'repositories'));
          navigate(path(`repositories/${repository.id}`));
        }}
      />
    </>
  );
}
