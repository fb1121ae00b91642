import { Button, Code, Group, Stack } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useNavigate, useParams } from 'react-router';
import { api, unwrap } from '../../api.ts';
import { invalidate, projectKey } from '../../app/query.ts';
import { useProject } from '../../app/project.tsx';
import { ConfirmButton, DetailHeader, Facts } from '../../ui/actions.tsx';
import { ErrorAlert } from '../../ui/feedback.tsx';
import { formatTime } from '../../ui/format.ts';
import { FormModal } from '../../ui/FormModal.tsx';
import { clientBody, clientFields, ConsentPreview, type ClientValues } from './form.tsx';

export default function ClientDetail() {
  const { projectId, can, path } = useProject();
  const clientId = useParams().clientId!;
  const navigate = useNavigate();
  const [editing, setEditing] = useState(false);
  const params = { params: { path: { project_id: projectId, client_id: clientId } } };
  const client = useQuery({ queryKey: projectKey(projectId, 'oauth-clients', clientId), queryFn: () => unwrap(api.GET('/accounts/projects/{project_id}/oauth/clients/{client_id}', params)) });
  if (!client.data) return <ErrorAlert error={client.error} />;
  const c = client.data;
  const values: ClientValues = {
    name: c.name,
    redirect_uris: c.redirect_uris,
    grant_types: c.grant_types as ClientValues['grant_types'],
    scope: c.scope.split(' ').filter(Boolean),
    metadata: { logo_url: c.metadata.logo_url ?? '', theme: c.metadata.theme ?? 'auto' },
    public: c.public,
  };
  return (
    <Stack>
      <DetailHeader
        title={c.name || c.client_id}
        back={{ to: path('oauth-clients'), label: 'OAuth clients' }}
        actions={can('oauth_client_manager') && (
          <>
            <Button variant="default" onClick={() => setEditing(true)}>Edit</Button>
            <ConfirmButton label="Delete" title={`Delete ${c.name || c.client_id}?`} message="Its users can no longer sign in through it, and its tokens stop working." onConfirm={async () => {
              await unwrap(api.DELETE('/accounts/projects/{project_id}/oauth/clients/{client_id}', params));
              await invalidate(projectKey(projectId, 'oauth-clients'));
              navigate(path('oauth-clients'));
            }} />
          </>
        )}
      />
      <Facts rows={[
        ['Client id', <Code key="id">{c.client_id}</Code>],
        ['Type', c.public ? 'public (PKCE, no secret)' : 'confidential (the secret was shown once, at registration)'],
        ['Redirect URIs', c.redirect_uris.length > 0 ? <Stack key="uris" gap={2}>{c.redirect_uris.map((uri) => <Code key={uri}>{uri}</Code>)}</Stack> : '—'],
        ['Grant types', c.grant_types.join(', ')],
        ['Scopes', c.scope],
        ['Created', formatTime(c.created_at)],
      ]} />
      <Group grow align="flex-start"><ConsentPreview values={values} /></Group>
      <FormModal<ClientValues>
        opened={editing}
        onClose={() => setEditing(false)}
        title="Edit OAuth client"
        fields={clientFields(false)}
        initialValues={values}
        submitLabel="Save"
        preview={(current) => <ConsentPreview values={current} />}
        submit={async (current) => {
          await unwrap(api.PUT('/accounts/projects/{project_id}/oauth/clients/{client_id}', { ...params, body: clientBody(current, false) }));
          await invalidate(projectKey(projectId, 'oauth-clients'));
        }}
      />
    </Stack>
  );
}
