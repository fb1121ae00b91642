import { Badge, Button } from '@mantine/core';
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { api, unwrap, type ResponseOf } from '../../api.ts';
import { invalidate, projectKey } from '../../app/query.ts';
import { useProject } from '../../app/project.tsx';
import { CopyField, ShownOnce } from '../../ui/feedback.tsx';
import { formatTime } from '../../ui/format.ts';
import { FormModal } from '../../ui/FormModal.tsx';
import { ListPage } from '../../ui/ListPage.tsx';
import { clientBody, clientFields, ConsentPreview, type ClientValues } from './form.tsx';

type Client = ResponseOf<'/accounts/projects/{project_id}/oauth/clients', 'get'>['clients'][number];

const EMPTY: ClientValues = { name: '', redirect_uris: [], grant_types: ['authorization_code', 'refresh_token'], scope: ['openid', 'email', 'profile:read'], metadata: { logo_url: '', theme: 'auto' }, public: false };

export default function ClientList() {
  const { projectId, can, path } = useProject();
  const navigate = useNavigate();
  const [creating, setCreating] = useState(false);
  const [secret, setSecret] = useState<{ id: string; secret: string }>();
  const key = projectKey(projectId, 'oauth-clients');
  return (
    <>
      <ListPage<Client>
        title="OAuth clients"
        description="Applications that sign their users in through Atrium."
        queryKey={key}
        load={async ({ offset, limit, filter }) => {
          const page = await unwrap(api.GET('/accounts/projects/{project_id}/oauth/clients', { params: { path: { project_id: projectId }, query: { offset, count: limit, ...(filter ? { filter } : {}) } } }));
          return { items: page.clients, total: page.total };
        }}
        columns={[
          { header: 'Name', cell: (client) => client.name || client.client_id },
          { header: 'Client id', cell: (client) => client.client_id },
          { header: 'Type', cell: (client) => <Badge variant="light">{client.public ? 'public' : 'confidential'}</Badge> },
          { header: 'Created', cell: (client) => formatTime(client.created_at) },
        ]}
        rowKey={(client) => client.client_id}
        rowLink={(client) => path(`oauth-clients/${encodeURIComponent(client.client_id)}`)}
        actions={can('oauth_client_creator') && <Button onClick={() => setCreating(true)}>New OAuth client</Button>}
        empty="No OAuth clients yet."
      />
      <FormModal<ClientValues>
        opened={creating}
        onClose={() => setCreating(false)}
        title="New OAuth client"
        fields={clientFields(true)}
        initialValues={EMPTY}
        submitLabel="Register client"
        preview={(values) => <ConsentPreview values={values} />}
        submit={async (values) => {
          const client = await unwrap(api.POST('/accounts/projects/{project_id}/oauth/clients', { params: { path: { project_id: projectId } }, body: { ...clientBody(values, true), public: values.public } }));
          await invalidate(key);
          if (client.client_secret) setSecret({ id: client.client_id, secret: client.client_secret });
          else navigate(path(`oauth-clients/${encodeURIComponent(client.client_id)}`));
        }}
      />
      <ShownOnce
        title="Your new client's secret"
        label="Client secret"
        value={secret?.secret}
        onClose={() => {
          const id = secret?.id;
          setSecret(undefined);
          if (id) navigate(path(`oauth-clients/${encodeURIComponent(id)}`));
        }}
      >
        <CopyField label="Client id" value={secret?.id ?? ''} />
      </ShownOnce>
    </>
  );
}
