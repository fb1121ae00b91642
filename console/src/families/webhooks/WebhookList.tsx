import { Badge, Button } from '@mantine/core';
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { api, unwrap, type ResponseOf } from '../../api.ts';
import { invalidate, projectKey } from '../../app/query.ts';
import { useProject } from '../../app/project.tsx';
import { ShownOnce } from '../../ui/feedback.tsx';
import { FormModal, jsonValue } from '../../ui/FormModal.tsx';
import { ListPage, pageLocally } from '../../ui/ListPage.tsx';
import { webhookFields, type WebhookValues } from './form.ts';

type Webhook = ResponseOf<'/accounts/projects/{project_id}/webhooks', 'get'>['webhooks'][number];

export default function WebhookList() {
  const { projectId, path } = useProject();
  const navigate = useNavigate();
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<{ id: string; secret: string }>();
  const key = projectKey(projectId, 'webhooks');
  const params = { params: { path: { project_id: projectId } } };
  return (
    <>
      <ListPage<Webhook>
        title="Webhooks"
        description="URLs Atrium calls, signed, when events happen in this project."
        queryKey={key}
        load={async (page) => pageLocally((await unwrap(api.GET('/accounts/projects/{project_id}/webhooks', { params: { ...params.params, query: page.filter ? { filter: page.filter } : {} } }))).webhooks, page)}
        filterLabel="Filter by name or URL"
        columns={[
          { header: 'Name', cell: (w) => w.name },
          { header: 'URL', cell: (w) => w.url },
          { header: 'Events', cell: (w) => w.events.join(', ') },
          { header: 'State', cell: (w) => <Badge color={w.enabled ? 'green' : 'gray'}>{w.enabled ? 'enabled' : 'disabled'}</Badge> },
        ]}
        rowKey={(w) => w.id}
        rowLink={(w) => path(`webhooks/${w.id}`)}
        actions={<Button onClick={() => setCreating(true)}>New webhook</Button>}
        empty="No webhooks yet."
      />
      <FormModal<WebhookValues>
        opened={creating}
        onClose={() => setCreating(false)}
        title="New webhook"
        fields={webhookFields}
        initialValues={{ name: '', description: '', url: '', events: ['*'], payload: '' }}
        submitLabel="Register webhook"
        submit={async ({ name, description, url, events, payload }) => {
          const webhook = await unwrap(api.POST('/accounts/projects/{project_id}/webhooks', { ...params, body: { name, description, url, events, payload: jsonValue(payload) ?? null, secret: true } }));
          await invalidate(key);
          setCreated({ id: webhook.id, secret: webhook.secret ?? '' });
        }}
      />
      <ShownOnce
        title="The webhook's signing secret"
        label="Signing secret"
        kept="encrypted"
        value={created?.secret}
        onClose={() => {
          const id = created?.id;
          setCreated(undefined);
          if (id) navigate(path(`webhooks/${id}`));
        }}
      />
    </>
  );
}
