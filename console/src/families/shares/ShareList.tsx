// Shares: links into one room, each with a token shown once. The API has no route for one share,
// so the list is the page: its rows carry the settings and their actions.
import { Button, Code, Group, Text } from '@mantine/core';
import { useState } from 'react';
import { api, unwrap, type ResponseOf } from '../../api.ts';
import { invalidate, projectKey } from '../../app/query.ts';
import { useProject } from '../../app/project.tsx';
import { ConfirmButton } from '../../ui/actions.tsx';
import { CopyField, ShownOnce } from '../../ui/feedback.tsx';
import { formatTime } from '../../ui/format.ts';
import { FormModal, jsonValue, type Field } from '../../ui/FormModal.tsx';
import { ListPage } from '../../ui/ListPage.tsx';

type Share = ResponseOf<'/accounts/projects/{project_id}/shares', 'get'>['shares'][number];
type Created = ResponseOf<'/accounts/projects/{project_id}/shares', 'post'>;

interface ShareValues extends Record<string, unknown> {
  label: string;
  grants: string;
  expires_at: string;
}

const SETTINGS_FIELDS: Field[] = [
  { kind: 'text', name: 'label', label: 'Label' },
  { kind: 'json', name: 'grants', label: 'Grants (JSON, optional)', description: 'What a participant token from this share may do, e.g. {"livekit": {}, "messaging": {"send": false}}; empty: what a room viewer gets. Never more than you may use.' },
  { kind: 'text', name: 'expires_at', label: 'Expires at (optional)', placeholder: '2030-01-01T00:00:00Z', description: 'An ISO 8601 time in the future; empty: never.' },
];

function settingsOf(values: ShareValues) {
  const grants = jsonValue(values.grants);
  return {
    ...(values.label.trim() ? { label: values.label.trim() } : {}),
    ...(grants ? { grants } : {}),
    expires_at: values.expires_at.trim() || null,
  };
}

/** The API names the settings' fields (settings.grants, settings.expires_at…): shown under the field. */
const settingsField = (error: unknown) => {
  const message = error instanceof Error ? error.message.replace(/^(body\.)?settings\./, '') : '';
  return ['room', 'grants', 'expires_at', 'label'].find((name) => message.startsWith(name));
};

export default function ShareList() {
  const { projectId, can } = useProject();
  const [creating, setCreating] = useState(false);
  const [changing, setChanging] = useState<Share>();
  const [created, setCreated] = useState<Created>();
  const key = projectKey(projectId, 'shares');
  const label = (share: Share) => String(share.settings.label ?? share.id);
  return (
    <>
      <ListPage<Share>
        title="Shares"
        description="Links into one room for people without an account: whoever holds a share's token connects with its grants, until it expires or is deleted."
        queryKey={key}
        filterLabel="Filter by label or room"
        load={async ({ offset, limit, filter }) => {
          const page = await unwrap(api.GET('/accounts/projects/{project_id}/shares', { params: { path: { project_id: projectId }, query: { offset, limit, ...(filter ? { filter } : {}) } } }));
          return { items: page.shares, total: page.total };
        }}
        columns={[
          { header: 'Label', cell: label },
          { header: 'Room', cell: (share) => String(share.settings.room) },
          { header: 'Grants', cell: (share) => share.settings.grants ? <Code>{JSON.stringify(share.settings.grants)}</Code> : 'viewer' },
          { header: 'Expires', cell: (share) => share.expires_at ? formatTime(share.expires_at) : 'never' },
          ...(can('share_manager')
            ? [{
              header: 'Actions',
              cell: (share: Share) => (
                <Group gap="xs" wrap="nowrap">
                  <Button size="xs" variant="default" onClick={() => setChanging(share)}>Edit</Button>
                  <ConfirmButton label="Delete" title={`Delete share ${label(share)}?`} message="Its token stops working; participants already in the room stay until they leave." onConfirm={async () => {
                    await unwrap(api.DELETE('/accounts/projects/{project_id}/shares/{share_id}', { params: { path: { project_id: projectId, share_id: share.id } } }));
                    await invalidate(key);
                  }} />
                </Group>
              ),
            }]
            : []),
        ]}
        rowKey={(share) => share.id}
        actions={can('share_creator') && <Button onClick={() => setCreating(true)}>New share</Button>}
        empty="No shares yet."
      />
      <FormModal<ShareValues & { room: string }>
        opened={creating}
        onClose={() => setCreating(false)}
        title="New share"
        fields={[{ kind: 'text', name: 'room', label: 'Room', required: true }, ...SETTINGS_FIELDS]}
        initialValues={{ room: '', label: '', grants: '', expires_at: '' }}
        submitLabel="Create share"
        errorField={settingsField}
        submit={async (values) => {
          const share = await unwrap(api.POST('/accounts/projects/{project_id}/shares', { params: { path: { project_id: projectId } }, body: { settings: { room: values.room.trim(), ...settingsOf(values) } } }));
          await invalidate(key);
          setCreated(share);
        }}
      />
      {changing && (
        <FormModal<ShareValues>
          opened
          onClose={() => setChanging(undefined)}
          title={`Edit share ${label(changing)}`}
          fields={SETTINGS_FIELDS}
          initialValues={{
            label: String(changing.settings.label ?? ''),
            grants: changing.settings.grants ? JSON.stringify(changing.settings.grants, null, 2) : '',
            expires_at: changing.expires_at ?? '',
          }}
          submitLabel="Save"
          errorField={settingsField}
          submit={async (values) => {
            await unwrap(api.PUT('/accounts/projects/{project_id}/shares/{share_id}', { params: { path: { project_id: projectId, share_id: changing.id } }, body: { settings: { room: String(changing.settings.room), ...settingsOf(values) } } }));
            await invalidate(key);
          }}
        />
      )}
      <ShownOnce title="Share created" label="Share token" value={created?.token} onClose={() => setCreated(undefined)}>
        {created && (
          <>
            <CopyField label="Share id" value={created.id} />
            <Text size="sm">Whoever holds the token connects with <code>POST /shares/{created.id}/connect</code> and the token as the bearer.</Text>
          </>
        )}
      </ShownOnce>
    </>
  );
}
