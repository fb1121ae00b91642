// One webhook: its settings, secret rotation, and the delivery history with each attempt's
// request and response, and redelivery.
import { Accordion, Alert, Badge, Button, Group, Select, Stack, Table, Text, Title } from '@mantine/core';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useNavigate, useParams } from 'react-router';
import { api, unwrap, type ResponseOf } from '../../api.ts';
import { invalidate, projectKey } from '../../app/query.ts';
import { useProject } from '../../app/project.tsx';
import { ConfirmButton, DetailHeader, Facts } from '../../ui/actions.tsx';
import { ErrorAlert, Json, ShownOnce } from '../../ui/feedback.tsx';
import { formatTime } from '../../ui/format.ts';
import { FormModal, jsonValue } from '../../ui/FormModal.tsx';
import { webhookFields, type WebhookValues } from './form.ts';

type Delivery = ResponseOf<'/accounts/projects/{project_id}/webhooks/{webhook_id}/deliveries', 'get'>['deliveries'][number];
type Status = Delivery['status'];

const STATUS_COLOR: Record<Status, string> = { pending: 'yellow', succeeded: 'green', failed: 'red', cancelled: 'gray' };

function Deliveries({ projectId, webhookId }: { projectId: string; webhookId: string }) {
  const [status, setStatus] = useState<Status | null>(null);
  const byId = { project_id: projectId, webhook_id: webhookId };
  const key = projectKey(projectId, 'webhooks', webhookId, 'deliveries');
  const deliveries = useQuery({
    queryKey: [...key, status],
    queryFn: () => unwrap(api.GET('/accounts/projects/{project_id}/webhooks/{webhook_id}/deliveries', { params: { path: byId, query: { limit: 50, ...(status ? { status } : {}) } } })),
    refetchInterval: 3000,
  });
  const redeliver = useMutation({
    mutationFn: (deliveryId: string) => unwrap(api.POST('/accounts/projects/{project_id}/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver', { params: { path: { ...byId, delivery_id: deliveryId } }, body: {} })),
    onSuccess: () => invalidate(key),
  });
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={3}>Deliveries</Title>
        <Select aria-label="Delivery status" placeholder="Any status" data={Object.keys(STATUS_COLOR)} value={status} onChange={(value) => setStatus(value as Status | null)} clearable w={180} />
      </Group>
      <ErrorAlert error={deliveries.error ?? redeliver.error} />
      {deliveries.data?.deliveries.length === 0 && <Text c="dimmed">No deliveries yet.</Text>}
      <Accordion variant="separated">
        {deliveries.data?.deliveries.map((delivery) => (
          <Accordion.Item key={delivery.id} value={delivery.id} data-testid="delivery">
            <Accordion.Control>
              <Group>
                <Badge color={STATUS_COLOR[delivery.status]}>{delivery.status}</Badge>
                <Text fw={500}>{delivery.event}</Text>
                <Text size="sm" c="dimmed">{formatTime(delivery.created_at)}</Text>
                <Text size="sm" c="dimmed">{delivery.attempt_count} attempt(s){delivery.last_http_status ? `, HTTP ${delivery.last_http_status}` : ''}</Text>
              </Group>
            </Accordion.Control>
            <Accordion.Panel>
              <Stack>
                <Group justify="flex-end">
                  <Button size="xs" onClick={() => redeliver.mutate(delivery.id)} loading={redeliver.isPending && redeliver.variables === delivery.id}>Redeliver</Button>
                </Group>
                <Text fw={500} size="sm">Request: event data</Text>
                <Json value={delivery.data} />
                <Text fw={500} size="sm">Attempts</Text>
                <Table withTableBorder>
                  <Table.Thead><Table.Tr><Table.Th>#</Table.Th><Table.Th>Trigger</Table.Th><Table.Th>Started</Table.Th><Table.Th>Latency</Table.Th><Table.Th>Response</Table.Th></Table.Tr></Table.Thead>
                  <Table.Tbody>
                    {delivery.attempts.map((attempt) => (
                      <Table.Tr key={attempt.attempt}>
                        <Table.Td>{attempt.attempt}</Table.Td>
                        <Table.Td>{attempt.trigger}</Table.Td>
                        <Table.Td>{formatTime(attempt.started_at)}</Table.Td>
                        <Table.Td>{attempt.latency_ms} ms</Table.Td>
                        <Table.Td>
                          <Text size="sm" c={attempt.succeeded ? 'green' : 'red'}>{attempt.http_status ? `HTTP ${attempt.http_status}` : 'no response'}</Text>
                          {attempt.response_excerpt && <Text size="xs" ff="monospace" style={{ whiteSpace: 'pre-wrap' }}>{attempt.response_excerpt}</Text>}
                          {attempt.error && <Text size="xs" c="red">{attempt.error}</Text>}
                        </Table.Td>
                      </Table.Tr>
                    ))}
                  </Table.Tbody>
                </Table>
              </Stack>
            </Accordion.Panel>
          </Accordion.Item>
        ))}
      </Accordion>
    </Stack>
  );
}

export default function WebhookDetail() {
  const { projectId, path } = useProject();
  const webhookId = useParams().webhookId!;
  const navigate = useNavigate();
  const [editing, setEditing] = useState(false);
  const [secret, setSecret] = useState<string>();
  const params = { params: { path: { project_id: projectId, webhook_id: webhookId } } };
  const key = projectKey(projectId, 'webhooks');
  // The API lists webhooks but has no read of one; the list is small.
  const list = useQuery({ queryKey: key, queryFn: () => unwrap(api.GET('/accounts/projects/{project_id}/webhooks', { params: { path: { project_id: projectId } } })) });
  const webhook = list.data?.webhooks.find((w) => w.id === webhookId);
  const toggle = useMutation({
    mutationFn: (enabled: boolean) => unwrap(api.PUT('/accounts/projects/{project_id}/webhooks/{webhook_id}', { ...params, body: { enabled } })),
    onSuccess: () => invalidate(key),
  });
  // A signed webhook.test delivery through the same queue as any event: it shows in the history below.
  const test = useMutation({
    mutationFn: () => unwrap(api.POST('/accounts/projects/{project_id}/webhooks/{webhook_id}/test', { ...params, body: {} })),
    onSuccess: () => invalidate(projectKey(projectId, 'webhooks', webhookId, 'deliveries')),
  });
  if (!webhook) return list.isPending ? null : <ErrorAlert error={list.error ?? new Error('This webhook does not exist (any more).')} />;
  return (
    <Stack>
      <DetailHeader
        title={webhook.name}
        back={{ to: path('webhooks'), label: 'Webhooks' }}
        actions={(
          <>
            {webhook.action !== 'call' && <Button onClick={() => test.mutate()} loading={test.isPending} disabled={!webhook.enabled} title={webhook.enabled ? undefined : 'Enable the webhook first'}>Send test event</Button>}
            <Button variant="default" onClick={() => setEditing(true)}>Edit</Button>
            <Button variant="default" onClick={() => toggle.mutate(!webhook.enabled)} loading={toggle.isPending}>{webhook.enabled ? 'Pause' : 'Enable'}</Button>
            <ConfirmButton label="Rotate secret" color="orange" title="Rotate the signing secret?" message="A new secret signs deliveries from now on; the old one keeps signing alongside it for a day." confirmLabel="Rotate" onConfirm={async () => {
              const rotated = await unwrap(api.POST('/accounts/projects/{project_id}/webhooks/{webhook_id}/rotate-secret', { ...params, body: {} }));
              await invalidate(key);
              setSecret(rotated.secret ?? '');
            }} />
            <ConfirmButton label="Delete" title={`Delete ${webhook.name}?`} message="The webhook and its delivery history are deleted." onConfirm={async () => {
              await unwrap(api.DELETE('/accounts/projects/{project_id}/webhooks/{webhook_id}', params));
              await invalidate(key);
              navigate(path('webhooks'));
            }} />
          </>
        )}
      />
      <ErrorAlert error={toggle.error ?? test.error} />
      {test.isSuccess && <Alert color="green" role="status" withCloseButton onClose={() => test.reset()}>A webhook.test event is on its way; it shows under Deliveries.</Alert>}
      <Facts rows={[
        ['URL', webhook.url],
        ['Events', webhook.events.join(', ')],
        ['State', webhook.enabled ? 'enabled' : `disabled${webhook.disabled_reason ? `: ${webhook.disabled_reason}` : ''}`],
        ['Signed', webhook.has_secret ? `yes${webhook.previous_secret_expires_at ? ` (previous secret also signs until ${formatTime(webhook.previous_secret_expires_at)})` : ''}` : 'no'],
        ['Created', formatTime(webhook.created_at)],
      ]} />
      <Deliveries projectId={projectId} webhookId={webhookId} />
      <FormModal<WebhookValues>
        opened={editing}
        onClose={() => setEditing(false)}
        title="Edit webhook"
        fields={webhookFields}
        initialValues={{ name: webhook.name, description: webhook.description, url: webhook.url, events: webhook.events, payload: webhook.payload ? JSON.stringify(webhook.payload, null, 2) : '' }}
        submitLabel="Save"
        submit={async ({ name, description, url, events, payload }) => {
          await unwrap(api.PUT('/accounts/projects/{project_id}/webhooks/{webhook_id}', { ...params, body: { name, description, url, events, payload: jsonValue(payload) ?? null } }));
          await invalidate(key);
        }}
      />
      <ShownOnce title="The new signing secret" label="Signing secret" kept="encrypted" value={secret} onClose={() => setSecret(undefined)} />
    </Stack>
  );
}
