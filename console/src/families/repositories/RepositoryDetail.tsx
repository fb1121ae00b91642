import { Button, Group, Modal, Stack, Text } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useNavigate, useParams } from 'react-router';
import { api, unwrap, type ResponseOf } from '../../api.ts';
import { invalidate, projectKey } from '../../app/query.ts';
import { useProject, useRights } from '../../app/project.tsx';
import { ConfirmButton, DetailHeader, Facts } from '../../ui/actions.tsx';
import { CopyField, ErrorAlert } from '../../ui/feedback.tsx';
import { formatTime } from '../../ui/format.ts';
import { FormModal } from '../../ui/FormModal.tsx';
import { REPOSITORY_FIELDS, repositoryBody, repositoryValues } from './form.ts';

type Token = ResponseOf<'/accounts/projects/{project_id}/repositories/{repository_id}/token', 'post'>;

export default function RepositoryDetail() {
  const { projectId, path } = useProject();
  const repositoryId = useParams().repositoryId!;
  const navigate = useNavigate();
  const [editing, setEditing] = useState(false);
  const [asking, setAsking] = useState(false);
  const [token, setToken] = useState<Token>();
  const byId = { params: { path: { project_id: projectId, repository_id: repositoryId } } };
  const repository = useQuery({ queryKey: projectKey(projectId, 'repositories', repositoryId), queryFn: () => unwrap(api.GET('/accounts/projects/{project_id}/repositories/{repository_id}', byId)) });
  const may = useRights('repository', repositoryId);
  if (!repository.data) return <ErrorAlert error={repository.error} />;
  const current = repository.data;
  return (
    <Stack>
      <DetailHeader
        title={current.name}
        back={{ to: path('repositories'), label: 'Image repositories' }}
        actions={(
          <>
            {may('pull') && <Button onClick={() => setAsking(true)}>Registry token</Button>}
            {may('update') && <Button variant="default" onClick={() => setEditing(true)}>Edit</Button>}
            {may('delete') && (
              <ConfirmButton label="Delete" title={`Delete repository ${current.name}?`} message="No new token names it; images in the registry stay there." onConfirm={async () => {
                await unwrap(api.DELETE('/accounts/projects/{project_id}/repositories/{repository_id}', byId));
                await invalidate(projectKey(projectId, 'repositories'));
                navigate(path('repositories'));
              }} />
            )}
          </>
        )}
      />
      <Facts rows={[
        ['Id', current.id],
        ['In the registry', current.registry_name],
        ['Description', current.description || '—'],
        ['Annotations', Object.entries(current.annotations).map(([k, v]) => `${k}=${v}`).join(', ') || '—'],
        ['Created', formatTime(current.created_at)],
        ['Updated', formatTime(current.updated_at)],
      ]} />
      <FormModal<{ push: boolean }>
        opened={asking}
        onClose={() => setAsking(false)}
        title="A registry token"
        fields={[{ kind: 'switch', name: 'push', label: 'Push too (pull always)' }]}
        initialValues={{ push: false }}
        submitLabel="Get token"
        submit={async ({ push }) => {
          setToken(await unwrap(api.POST('/accounts/projects/{project_id}/repositories/{repository_id}/token', { ...byId, body: { actions: push ? ['pull', 'push'] : ['pull'] } })));
        }}
      />
      <Modal opened={token !== undefined} onClose={() => setToken(undefined)} title="Registry token" size="lg">
        {token && (
          <Stack>
            <CopyField label="Token" value={token.token} description={`Valid until ${formatTime(token.expires_at)}; the registry checks it offline.`} />
            <Text size="sm">Push and pull as <code>{current.registry_name}</code>.</Text>
            <Group justify="flex-end"><Button onClick={() => setToken(undefined)}>Done</Button></Group>
          </Stack>
        )}
      </Modal>
      <FormModal
        key={current.updated_at}
        opened={editing}
        onClose={() => setEditing(false)}
        title="Edit repository"
        fields={REPOSITORY_FIELDS}
        initialValues={repositoryValues(current)}
        submitLabel="Save"
        submit={async (values) => {
          await unwrap(api.PUT('/accounts/projects/{project_id}/repositories/{repository_id}', { ...byId, body: repositoryBody(values) }));
          await invalidate(projectKey(projectId, 'repositories'));
        }}
      />
    </Stack>
  );
}
