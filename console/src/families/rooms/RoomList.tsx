import { Button } from '@mantine/core';
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { api, unwrap, type ResponseOf } from '../../api.ts';
import { invalidate, projectKey } from '../../app/query.ts';
import { useProject } from '../../app/project.tsx';
import { FormModal, jsonValue } from '../../ui/FormModal.tsx';
import { ListPage } from '../../ui/ListPage.tsx';
import { formatTime } from '../../ui/format.ts';

type Room = ResponseOf<'/accounts/projects/{project_id}/rooms', 'get'>['rooms'][number];

export default function RoomList() {
  const { projectId, can, path } = useProject();
  const navigate = useNavigate();
  const [creating, setCreating] = useState(false);
  return (
    <>
      <ListPage<Room>
        title="Rooms"
        description="Rooms run on your room servers; connect gives a participant token and the room's URL."
        queryKey={projectKey(projectId, 'rooms')}
        load={async ({ offset, limit, filter }) => {
          const page = await unwrap(api.GET('/accounts/projects/{project_id}/rooms', { params: { path: { project_id: projectId }, query: { offset, limit, ...(filter ? { filter } : {}) } } }));
          return { items: page.rooms, total: page.total };
        }}
        columns={[
          { header: 'Name', cell: (room) => room.name },
          { header: 'Id', cell: (room) => room.id },
          { header: 'Created', cell: (room) => formatTime(room.created_at) },
        ]}
        rowKey={(room) => room.id}
        rowLink={(room) => path(`rooms/${encodeURIComponent(room.name)}`)}
        actions={can('room_creator') && <Button onClick={() => setCreating(true)}>New room</Button>}
        empty="No rooms yet."
      />
      <FormModal
        opened={creating}
        onClose={() => setCreating(false)}
        title="New room"
        fields={[
          { kind: 'text', name: 'name', label: 'Name', required: true },
          { kind: 'json', name: 'metadata', label: 'Metadata (JSON object, optional)' },
        ]}
        initialValues={{ name: '', metadata: '' }}
        submitLabel="Create room"
        submit={async ({ name, metadata }) => {
          const room = await unwrap(api.POST('/accounts/projects/{project_id}/rooms', { params: { path: { project_id: projectId } }, body: { name, metadata: jsonValue(metadata) ?? null } }));
          await invalidate(projectKey(projectId, 'rooms'));
          navigate(path(`rooms/${encodeURIComponent(room.name)}`));
        }}
      />
    </>
  );
}
