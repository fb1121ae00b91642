// What a room server reads to run one room: its services (the project's and its own, templates
// rendered), the secrets they and one identity need (decrypted), and its mailboxes. Each read names
// the room; nothing here reaches another room or another project.
import type { AppContext } from '../../context.ts';
import { mailboxesOfRoom } from '../mailboxes/service.ts';
import { getRoom } from '../rooms/service.ts';
import { secretsForRoomServer } from '../secrets/service.ts';
import { secretsOf, servicesToRun } from '../services/service.ts';

async function roomRef(ctx: AppContext, projectId: string, roomName: string) {
  const room = await getRoom(ctx, projectId, roomName);
  return { id: room.id, name: room.name };
}

export async function roomServices(ctx: AppContext, projectId: string, roomName: string) {
  const room = await roomRef(ctx, projectId, roomName);
  return { room, services: await servicesToRun(ctx, projectId, room.id) };
}

export async function roomSecrets(ctx: AppContext, projectId: string, roomName: string, identity: string | undefined) {
  const room = await roomRef(ctx, projectId, roomName);
  const referenced = [...new Set((await servicesToRun(ctx, projectId, room.id)).flatMap(({ spec }) => secretsOf(spec)))];
  return { room, secrets: await secretsForRoomServer(ctx, projectId, room.id, referenced, identity) };
}

export async function roomMailboxes(ctx: AppContext, projectId: string, roomName: string) {
  const room = await roomRef(ctx, projectId, roomName);
  return { room, mailboxes: await mailboxesOfRoom(ctx, projectId, room.id) };
}
