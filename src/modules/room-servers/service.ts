// What a room server reads to run one room: its services (the project's and its own, templates
// rendered), the secrets they and one identity need (decrypted), and its mailboxes. Each read names
// the room; nothing here reaches another room or another project.
import type { AppContext } from '../../context.ts';
import { mailboxesOfRoom } from '../mailboxes/service.ts';
import { getRoom } from '../rooms/service.ts';
import { secretsForRoomServer } from '../secrets/service.ts';
import { servicesToRun, type ServiceToRun } from '../services/service.ts';

async function roomRef(ctx: AppContext, projectId: string, roomName: string) {
  const room = await getRoom(ctx, projectId, roomName);
  return { id: room.id, name: room.name };
}

export async function roomServices(ctx: AppContext, projectId: string, roomName: string) {
  const room = await roomRef(ctx, projectId, roomName);
  return { room, services: await servicesToRun(ctx, projectId, room.id) };
}

/** Ids of the project secrets a service spec refers to: `secrets`, `pull_secret`, and environment values from secrets. */
function referencedSecrets(services: readonly ServiceToRun[]): string[] {
  const ids = new Set<string>();
  for (const { spec } of services) {
    const container = spec.container as { secrets?: string[] | null; pull_secret?: string | { id: string } | null; environment?: { secret?: { id: string } | null }[] | null } | null | undefined;
    if (!container) continue;
    for (const id of container.secrets ?? []) ids.add(id);
    const pull = container.pull_secret;
    if (pull) ids.add(typeof pull === 'string' ? pull : pull.id);
    for (const variable of container.environment ?? []) if (variable.secret) ids.add(variable.secret.id);
  }
  return [...ids];
}

export async function roomSecrets(ctx: AppContext, projectId: string, roomName: string, identity: string | undefined) {
  const room = await roomRef(ctx, projectId, roomName);
  const referenced = referencedSecrets(await servicesToRun(ctx, projectId, room.id));
  return { room, secrets: await secretsForRoomServer(ctx, projectId, room.id, referenced, identity) };
}

export async function roomMailboxes(ctx: AppContext, projectId: string, roomName: string) {
  const room = await roomRef(ctx, projectId, roomName);
  return { room, mailboxes: await mailboxesOfRoom(ctx, projectId, room.id) };
}
