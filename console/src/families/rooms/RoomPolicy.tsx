// A room's resource policy (docs/policies.md): the shared policy page for one room.
import { useQuery } from '@tanstack/react-query';
import { useParams } from 'react-router';
import { api, unwrap } from '../../api.ts';
import { projectKey } from '../../app/query.ts';
import { useProject, useRights } from '../../app/project.tsx';
import { ErrorAlert } from '../../ui/feedback.tsx';
import { ResourcePolicy } from '../../ui/ResourcePolicy.tsx';

export default function RoomPolicy() {
  const { projectId, path } = useProject();
  const roomName = useParams().roomName!;
  const room = useQuery({
    queryKey: projectKey(projectId, 'rooms', roomName),
    queryFn: () => unwrap(api.GET('/accounts/projects/{project_id}/rooms/{room_name}', { params: { path: { project_id: projectId, room_name: roomName } } })),
  });
  const may = useRights('room', room.data?.id);
  if (!room.data) return <ErrorAlert error={room.error} />;
  return (
    <ResourcePolicy
      type="room"
      resourceId={room.data.id}
      label={`room ${roomName}`}
      back={{ to: path(`rooms/${encodeURIComponent(roomName)}`), label: 'Back to the room' }}
      roles={['admin', 'developer', 'operator', 'viewer', 'list']}
      rolesHelp="admin, developer: everything; operator: join and act; viewer: join and watch; list: find the room only."
      manage={may('change_policy')}
      note="Project admins and developers always have every right in every room."
    />
  );
}
