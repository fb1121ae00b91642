import { Badge, Button } from '@mantine/core';
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { api, unwrap } from '../../api.ts';
import { invalidate, projectKey } from '../../app/query.ts';
import { useProject } from '../../app/project.tsx';
import { FormModal } from '../../ui/FormModal.tsx';
import { ListPage } from '../../ui/ListPage.tsx';
import { FEED_FIELDS, NEW_FEED, VISIBILITY_FIELD, feedBody, feedErrorField, type Feed, type Visibility } from './form.ts';

export default function FeedList() {
  const { projectId, can, path } = useProject();
  const navigate = useNavigate();
  const [creating, setCreating] = useState(false);
  return (
    <>
      <ListPage<Feed>
        title="Feeds"
        description="Channels of JSON messages; their subscriptions write the messages into rooms' storage as JSON Lines files."
        queryKey={projectKey(projectId, 'feeds')}
        load={async ({ offset, limit, filter }) => {
          const page = await unwrap(api.GET('/accounts/projects/{project_id}/feeds', { params: { path: { project_id: projectId }, query: { offset, count: limit, ...(filter ? { filter } : {}) } } }));
          return { items: page.feeds, total: page.total };
        }}
        columns={[
          { header: 'Name', cell: (feed) => feed.name },
          { header: 'Visibility', cell: (feed) => feed.visibility },
          { header: 'State', cell: (feed) => <Badge color={feed.paused ? 'gray' : 'green'}>{feed.paused ? 'paused' : 'active'}</Badge> },
          { header: 'Description', cell: (feed) => feed.description },
        ]}
        rowKey={(feed) => feed.id}
        rowLink={(feed) => path(`feeds/${feed.id}`)}
        actions={can('feed_creator') && <Button onClick={() => setCreating(true)}>New feed</Button>}
        empty="No feeds yet."
      />
      <FormModal
        opened={creating}
        onClose={() => setCreating(false)}
        title="New feed"
        fields={[FEED_FIELDS[0]!, VISIBILITY_FIELD, ...FEED_FIELDS.slice(1)]}
        initialValues={NEW_FEED}
        submitLabel="Create feed"
        errorField={feedErrorField}
        submit={async (values) => {
          const { feed } = await unwrap(api.POST('/accounts/projects/{project_id}/feeds', {
            params: { path: { project_id: projectId } },
            body: { ...feedBody(values), visibility: values.visibility as Visibility },
          }));
          await invalidate(projectKey(projectId, 'feeds'));
          navigate(path(`feeds/${feed.id}`));
        }}
      />
    </>
  );
}
