// Families that exist for the project and for each room (services, secrets): the same pages under
// /p/:projectId/<family> and /p/:projectId/rooms/:roomName/<family>.
import { useParams } from 'react-router';
import { useProject } from '../app/project.tsx';

export interface Scope {
  /** The room whose own resources these are; undefined for the project's. */
  roomName: string | undefined;
  /** A console path in this scope: `path('services')`. */
  path: (sub: string) => string;
  /** Where the list's way back leads. */
  back: { to: string; label: string } | undefined;
  /** Words for the page: "the project" or "room lobby". */
  words: string;
}

export function useScope(): Scope {
  const { path } = useProject();
  const roomName = useParams().roomName;
  const room = roomName === undefined ? undefined : `rooms/${encodeURIComponent(roomName)}`;
  return {
    roomName,
    path: (sub) => path(room ? `${room}/${sub}` : sub),
    back: room ? { to: path(room), label: `Room ${roomName}` } : undefined,
    words: roomName === undefined ? 'the project' : `room ${roomName}`,
  };
}
