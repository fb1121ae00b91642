import { Anchor, Button, Group, Stack, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { api, unwrap } from '../../api.ts';
import { invalidate, projectKey } from '../../app/query.ts';
import { useProject, useRights } from '../../app/project.tsx';
import { ConfirmButton, DetailHeader, Facts } from '../../ui/actions.tsx';
import { useConnect } from '../../ui/connect.tsx';
import { ErrorAlert, Json } from '../../ui/feedback.tsx';
import { formatTime } from '../../ui/format.ts';
import { FormModal, jsonValue } from '../../ui/FormModal.tsx';

export default function RoomDetail() {
  const { projectId, path } = useProject();
  const roomName = useParams().roomName!;
  const navigate = useNavigate();
  const [editing, setEditing] = useState(false);
  const byName = { params: { path: { project_id: projectId, room_name: roomName } } };
  const room = useQuery({ queryKey: projectKey(projectId, 'rooms', roomName), queryFn: () => unwrap(api.GET('/accounts/projects/{project_id}/rooms/{room_name}', byName)) });
  const connect = useConnect({
    connect: () => unwrap(api.POST('/accounts/projects/{project_id}/rooms/{room_name}/connect', { ...byName, body: {} })),
    title: `Connect to ${roomName}`,
    fields: (connection) => [
      { label: 'Room URL', value: connection.room_url },
      { label: 'Participant token', value: connection.jwt, description: 'A fresh token for you in this room; give it to the client that joins.' },
    ],
  });
  const may = useRights('room', room.data?.id);
  if (!room.data) return <ErrorAlert error={room.error} />;
  const byId = { params: { path: { project_id: projectId, room_id: room.data.id } } };
  return (
    <Stack>
      <DetailHeader
        title={room.data.name}
        back={{ to: path('rooms'), label: 'Rooms' }}
        actions={(
          <>
            {may('connect') && connect.button}
            {may('update') && <Button variant="default" onClick={() => setEditing(true)}>Edit</Button>}
            {may('delete') && (
              <ConfirmButton label="Delete" title={`Delete room ${room.data.name}?`} message="The room and its configuration are deleted. This cannot be undone." onConfirm={async () => {
                await unwrap(api.DELETE('/accounts/projects/{project_id}/rooms/{room_id}', byId));
                await invalidate(projectKey(projectId, 'rooms'));
                navigate(path('rooms'));
              }} />
            )}
          </>
        )}
      />
      {connect.error}
      <Facts rows={[['Id', room.data.id], ['Created', formatTime(room.data.created_at)], ['Updated', formatTime(room.data.updated_at)]]} />
      <RoomResources roomName={room.data.name} policy={may('read_policy')} />
      <Title order={4}>Metadata</Title>
      <Json value={room.data.metadata} />
      {connect.dialog}
      <FormModal
        opened={editing}
        onClose={() => setEditing(false)}
        title="Edit room"
        fields={[
          { kind: 'text', name: 'name', label: 'Name', required: true, placeholder: 'Renaming keeps the id' },
          { kind: 'json', name: 'metadata', label: 'Metadata (JSON object)' },
        ]}
        initialValues={{ name: room.data.name, metadata: JSON.stringify(room.data.metadata, null, 2) }}
        submitLabel="Save"
        submit={async ({ name, metadata }) => {
          const updated = await unwrap(api.PUT('/accounts/projects/{project_id}/rooms/{room_id}', { ...byId, body: { name, metadata: jsonValue(metadata) ?? null } }));
          await invalidate(projectKey(projectId, 'rooms'));
          if (updated.name !== roomName) navigate(path(`rooms/${encodeURIComponent(updated.name)}`), { replace: true });
        }}
      />
    </Stack>
  );
}

/** The room's own resources (services, secrets…), each a family's pages in the room's scope, and its access policy. */
function RoomResources({ roomName, policy }: { roomName: string; policy: boolean }) {
  const { can, path } = useProject();
  const links = ([
    ['services', 'Services', can('service_inventory')],
    ['secrets', 'Secrets', can('secret_inventory')],
    ['external-oauth', 'External OAuth', can('external_oauth_inventory')],
    ['policy', 'Access policy', policy],
  ] as const).filter(([, , shown]) => shown);
  if (links.length === 0) return null;
  return (
    <Group aria-label="In this room" role="navigation">
      {links.map(([sub, label]) => <Anchor key={sub} component={Link} to={path(`rooms/${encodeURIComponent(roomName)}/${sub}`)}>{label}</Anchor>)}
    </Group>
  );
}
