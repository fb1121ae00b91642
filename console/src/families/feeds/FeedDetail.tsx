// One feed: its settings, publishing a test message, and its subscriptions (the rooms whose storage
// receives its messages), each editable in place.
import { Anchor, Button, Group, Stack, Text, Title } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { ApiError, api, unwrap } from '../../api.ts';
import { invalidate, projectKey } from '../../app/query.ts';
import { useProject } from '../../app/project.tsx';
import { ConfirmButton, DetailHeader, Facts } from '../../ui/actions.tsx';
import { ErrorAlert, Json } from '../../ui/feedback.tsx';
import { formatTime } from '../../ui/format.ts';
import { FormModal } from '../../ui/FormModal.tsx';
import { ListPage } from '../../ui/ListPage.tsx';
import {
  FEED_FIELDS, NEW_SUBSCRIPTION_FIELDS, SUBSCRIPTION_FIELDS, feedBody, feedErrorField, feedValues, subscriptionBody, subscriptionValues,
  type Subscription, type SubscriptionValues,
} from './form.ts';

const storageFolder = (subscription: Subscription) => `rooms/${subscription.room}${subscription.path ? `/${subscription.path.replace(/^\/+|\/+$/g, '')}` : ''}`;

/** What the API says the user may do with this feed (`feed.<action>`: project roles, the feed's policy). */
type FeedRights = readonly string[];

function Subscriptions({ feedId, rights }: { feedId: string; rights: FeedRights }) {
  const { projectId, path } = useProject();
  const [creating, setCreating] = useState(false);
  const [changing, setChanging] = useState<Subscription>();
  const key = projectKey(projectId, 'feeds', feedId, 'subscriptions');
  const byFeed = { project_id: projectId, feed_id: feedId };
  return (
    <>
      <ListPage<Subscription>
        title="Subscriptions"
        description="Each writes the messages published after its creation into a room's storage."
        queryKey={key}
        filterLabel="Filter by room"
        load={async ({ offset, limit, filter }) => {
          const page = await unwrap(api.GET('/accounts/projects/{project_id}/feeds/{feed_id}/subscriptions', { params: { path: byFeed, query: { offset, count: limit, ...(filter ? { filter } : {}) } } }));
          return { items: page.subscriptions, total: page.total };
        }}
        columns={[
          { header: 'Room', cell: (s) => s.room },
          { header: 'Path', cell: (s) => <Anchor component={Link} to={`${path('storage')}?path=${encodeURIComponent(storageFolder(s))}`}>{storageFolder(s)}</Anchor> },
          { header: 'File names', cell: (s) => s.filename_datetime_format ?? 'YYYY-MM-DDThh_mm_ssZ' },
          { header: 'Created', cell: (s) => formatTime(s.created_at) },
          ...(rights.includes('change_subscriptions')
            ? [{
              header: 'Actions',
              cell: (s: Subscription) => (
                <Group gap="xs" wrap="nowrap">
                  <Button size="xs" variant="default" onClick={() => setChanging(s)}>Edit</Button>
                  <ConfirmButton label="Delete" title={`Unsubscribe room ${s.room}?`} message="Nothing more is written for this subscription; files already written stay." onConfirm={async () => {
                    await unwrap(api.DELETE('/accounts/projects/{project_id}/feeds/{feed_id}/subscriptions/{subscription_id}', { params: { path: { ...byFeed, subscription_id: s.id } } }));
                    await invalidate(key);
                  }} />
                </Group>
              ),
            }]
            : []),
        ]}
        rowKey={(s) => s.id}
        actions={rights.includes('add_subscription') && <Button onClick={() => setCreating(true)}>New subscription</Button>}
        empty="No subscriptions yet."
      />
      <FormModal<SubscriptionValues & { room: string; path: string }>
        opened={creating}
        onClose={() => setCreating(false)}
        title="New subscription"
        fields={NEW_SUBSCRIPTION_FIELDS}
        initialValues={{ room: '', path: '', filename_datetime_format: '', annotations: '' }}
        submitLabel="Subscribe"
        submit={async (values) => {
          await unwrap(api.POST('/accounts/projects/{project_id}/feeds/{feed_id}/subscriptions', { params: { path: byFeed }, body: { room: values.room.trim(), path: values.path.trim(), ...subscriptionBody(values) } }));
          await invalidate(key);
        }}
      />
      {changing && (
        <FormModal<SubscriptionValues>
          opened
          onClose={() => setChanging(undefined)}
          title={`Edit the subscription of room ${changing.room}`}
          fields={SUBSCRIPTION_FIELDS}
          initialValues={subscriptionValues(changing)}
          submitLabel="Save"
          submit={async (values) => {
            await unwrap(api.PUT('/accounts/projects/{project_id}/feeds/{feed_id}/subscriptions/{subscription_id}', { params: { path: { ...byFeed, subscription_id: changing.id } }, body: subscriptionBody(values) }));
            await invalidate(key);
          }}
        />
      )}
    </>
  );
}

export default function FeedDetail() {
  const { projectId, path } = useProject();
  const feedId = useParams().feedId!;
  const navigate = useNavigate();
  const [editing, setEditing] = useState(false);
  const [publishing, setPublishing] = useState(false);
  const [published, setPublished] = useState<number>();
  const byId = { params: { path: { project_id: projectId, feed_id: feedId } } };
  const feed = useQuery({ queryKey: projectKey(projectId, 'feeds', feedId), queryFn: () => unwrap(api.GET('/accounts/projects/{project_id}/feeds/{feed_id}', byId)) });
  if (!feed.data) return <ErrorAlert error={feed.error} />;
  const current = feed.data.feed;
  const { rights } = feed.data;
  return (
    <Stack>
      <DetailHeader
        title={current.name}
        back={{ to: path('feeds'), label: 'Feeds' }}
        actions={(
          <>
            {rights.includes('publish') && <Button onClick={() => setPublishing(true)} disabled={current.paused}>Publish a message</Button>}
            {rights.includes('manage') && (
              <>
                <Button variant="default" onClick={() => setEditing(true)}>Edit</Button>
                <ConfirmButton label="Delete" title={`Delete feed ${current.name}?`} message="Its waiting messages, its subscriptions and the LLM loggers that write into it are deleted. Files already written stay." onConfirm={async () => {
                  await unwrap(api.DELETE('/accounts/projects/{project_id}/feeds/{feed_id}', byId));
                  await invalidate(projectKey(projectId, 'feeds'));
                  navigate(path('feeds'));
                }} />
              </>
            )}
          </>
        )}
      />
      {published !== undefined && <Text size="sm" c="green" role="status">Published as message {published}.</Text>}
      <Facts rows={[
        ['Id', current.id],
        ['Visibility', current.visibility],
        ['State', current.paused ? 'paused: refuses messages, holds back delivery' : 'active'],
        ['Description', current.description || '—'],
        ['Annotations', Object.entries(current.annotations).map(([k, v]) => `${k}=${v}`).join(', ') || '—'],
        ['Created', formatTime(current.created_at)],
        ['Updated', formatTime(current.updated_at)],
      ]} />
      {rights.includes('read_policy') && (
        <Group aria-label="Of this feed" role="navigation">
          <Anchor component={Link} to={path(`feeds/${feedId}/policy`)}>Access policy</Anchor>
        </Group>
      )}
      <Title order={4}>Message schema</Title>
      {current.message_schema === null || current.message_schema === true ? <Text c="dimmed">Any JSON value.</Text> : <Json value={current.message_schema} />}
      {rights.includes('read_subscriptions') && <Subscriptions feedId={feedId} rights={rights} />}
      <FormModal
        key={JSON.stringify(current)}
        opened={editing}
        onClose={() => setEditing(false)}
        title="Edit feed"
        fields={FEED_FIELDS}
        initialValues={feedValues(current)}
        submitLabel="Save"
        errorField={feedErrorField}
        submit={async (values) => {
          await unwrap(api.PUT('/accounts/projects/{project_id}/feeds/{feed_id}', { ...byId, body: feedBody(values) }));
          await invalidate(projectKey(projectId, 'feeds'));
        }}
      />
      <FormModal
        opened={publishing}
        onClose={() => setPublishing(false)}
        title={`Publish to ${current.name}`}
        fields={[{ kind: 'json', name: 'message', label: 'Message (JSON)', required: true, description: 'Delivered to every subscription; it must match the feed\'s message schema.' }]}
        initialValues={{ message: '' }}
        submitLabel="Publish"
        // "the message does not match the feed's message_schema at …" (400) is about the message; a paused feed's 409 is not.
        errorField={(error) => (error instanceof ApiError && error.status === 400 ? 'message' : undefined)}
        submit={async ({ message }) => {
          if (message.trim() === '') throw new Error('message: type a JSON value');
          const accepted = await unwrap(api.POST('/accounts/projects/{project_id}/feeds/{feed_id}/messages', { ...byId, body: JSON.parse(message) as unknown }));
          setPublished(accepted.seq);
          notifications.show({ message: `Published as message ${accepted.seq}` });
        }}
      />
    </Stack>
  );
}
