// Rules for mailboxes: an address under a mail domain the operator allows (ATRIUM_MAIL_DOMAINS),
// claimed by one project of the deployment, delivering to a queue of one of the project's rooms.
import type { AppContext } from '../../context.ts';
import type { Actor } from '../../platform/http/authority.ts';
import { badRequest, conflict, notFound } from '../../platform/http/errors.ts';
import type { Page } from '../../platform/http/lists.ts';
import { findRoom, getRoom, requireInRoom } from '../rooms/service.ts';
import * as store from './store.ts';

export interface MailboxFields {
  room: string;
  queue: string;
  public?: boolean | null | undefined;
  annotations?: Record<string, string> | null | undefined;
}

export function mailboxView(row: store.MailboxWithRoom) {
  return { address: row.address, room: row.roomName, room_id: row.roomId, queue: row.queue, public: row.public, annotations: row.annotations };
}

/** The address as stored: lower-cased, its domain one the deployment allows. */
function checkedAddress(ctx: AppContext, address: string): string {
  const normal = address.toLowerCase();
  const domain = normal.slice(normal.lastIndexOf('@') + 1);
  const allowed = ctx.config.mailboxes.domains;
  if (!allowed.includes(domain)) {
    throw badRequest(allowed.length === 0
      ? 'This deployment allows no mail domains (the operator sets ATRIUM_MAIL_DOMAINS), so no mailbox can be created'
      : `body.address must be under a mail domain this deployment allows: ${allowed.join(', ')}`);
  }
  return normal;
}

async function changesOf(ctx: AppContext, actor: Actor, projectId: string, input: MailboxFields) {
  const room = await findRoom(ctx, projectId, input.room);
  if (!room) throw badRequest(`body.room: the project has no room named ${JSON.stringify(input.room)}`);
  // Its mail arrives in the room as messages: only for a caller who may connect to it.
  await requireInRoom(ctx, actor, room);
  return { roomId: room.id, queue: input.queue, public: input.public ?? false, annotations: input.annotations ?? {} };
}

async function view(ctx: AppContext, projectId: string, address: string) {
  const row = await store.findMailbox(ctx.db, projectId, address);
  if (!row) throw notFound('Mailbox');
  return { mailbox: mailboxView(row) };
}

export async function createMailbox(ctx: AppContext, actor: Actor, projectId: string, input: MailboxFields & { address: string }) {
  const address = checkedAddress(ctx, input.address);
  const changes = await changesOf(ctx, actor, projectId, input);
  if (!(await store.insertMailbox(ctx.db, { address, projectId, ...changes }))) throw conflict(`The address ${address} is already a mailbox`, 'already_exists');
  return view(ctx, projectId, address);
}

export function getMailbox(ctx: AppContext, projectId: string, address: string) {
  return view(ctx, projectId, address.toLowerCase());
}

export async function listMailboxes(ctx: AppContext, projectId: string, roomName: string | undefined, page: Page) {
  const roomId = roomName === undefined ? undefined : (await getRoom(ctx, projectId, roomName)).id;
  const { items, total } = await store.listMailboxes(ctx.db, projectId, roomId, page);
  return { mailboxes: items.map(mailboxView), total };
}

export async function updateMailbox(ctx: AppContext, actor: Actor, projectId: string, address: string, input: MailboxFields) {
  const normal = address.toLowerCase();
  if (!(await store.findMailbox(ctx.db, projectId, normal))) throw notFound('Mailbox');
  if (!(await store.updateMailbox(ctx.db, projectId, normal, await changesOf(ctx, actor, projectId, input)))) throw notFound('Mailbox');
  return view(ctx, projectId, normal);
}

export async function deleteMailbox(ctx: AppContext, projectId: string, address: string): Promise<void> {
  if (!(await store.deleteMailbox(ctx.db, projectId, address.toLowerCase()))) throw notFound('Mailbox');
}

/** Every mailbox of a room, by address: for its room server. */
export async function mailboxesOfRoom(ctx: AppContext, projectId: string, roomId: string) {
  return (await store.mailboxesOfRoom(ctx.db, projectId, roomId)).map(mailboxView);
}
