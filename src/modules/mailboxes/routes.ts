// Mailboxes: create, list (project and room), fetch, replace and delete by address.
import type { Api } from '../../module.ts';
import type { AppContext } from '../../context.ts';
import { pageOf } from '../../platform/http/lists.ts';
import { Ok, OK, ProjectParams } from '../../platform/http/schemas.ts';
import { ACTS_IN_ROOM } from '../rooms/service.ts';
import * as schema from './schema.ts';
import * as service from './service.ts';

const tags = ['Mailboxes'];

export function mailboxRoutes(app: Api, ctx: AppContext): void {
  const base = '/accounts/projects/:project_id/mailboxes';
  // A mailbox's mail arrives in its room as messages: creating or moving one needs the caller's own access there.
  app.post(base, {
    config: { auth: { permission: 'mailbox_creator', within: ACTS_IN_ROOM } },
    schema: {
      tags, summary: 'Create a mailbox: mail to the address goes to a queue of a room', params: ProjectParams, body: schema.MailboxCreate, response: { 201: schema.MailboxEnvelope },
      description: 'The address must be under a mail domain the deployment allows (ATRIUM_MAIL_DOMAINS) and is unique across the deployment: 409 when any project has it. The room must exist in the project (400 naming it otherwise), and the caller must be allowed `room.connect` in it (403 otherwise): its mail arrives there.',
    },
  }, async (request, reply) => reply.status(201).send(await service.createMailbox(ctx, ctx.authority.actorOf(request), request.params.project_id, request.body)));

  app.get(base, {
    config: { auth: { permission: 'mailbox_inventory' } },
    schema: { tags, summary: "List the project's mailboxes, by address", params: ProjectParams, querystring: schema.MailboxListQuery, response: { 200: schema.MailboxList } },
  }, async (request) => service.listMailboxes(ctx, request.params.project_id, undefined, pageOf(request.query)));

  app.get('/accounts/projects/:project_id/rooms/:room_name/mailboxes', {
    config: { auth: { permission: 'mailbox_inventory' } },
    schema: { tags, summary: "List a room's mailboxes, by address", params: schema.RoomParams, querystring: schema.MailboxListQuery, response: { 200: schema.MailboxList } },
  }, async (request) => service.listMailboxes(ctx, request.params.project_id, request.params.room_name, pageOf(request.query)));

  app.get(`${base}/:address`, {
    config: { auth: { permission: 'mailbox_inventory' } },
    schema: { tags, summary: 'Fetch a mailbox', params: schema.AddressParams, response: { 200: schema.MailboxEnvelope } },
  }, async (request) => service.getMailbox(ctx, request.params.project_id, request.params.address));

  app.put(`${base}/:address`, {
    config: { auth: { permission: 'mailbox_manager', within: ACTS_IN_ROOM } },
    schema: { tags, summary: "Replace a mailbox's room, queue, public flag and annotations", params: schema.AddressParams, body: schema.MailboxUpdate, response: { 200: schema.MailboxEnvelope } },
  }, async (request) => service.updateMailbox(ctx, ctx.authority.actorOf(request), request.params.project_id, request.params.address, request.body));

  app.delete(`${base}/:address`, {
    config: { auth: { permission: 'mailbox_manager' } },
    schema: { tags, summary: 'Delete a mailbox (the address is free again)', params: schema.AddressParams, response: { 200: Ok } },
  }, async (request) => {
    await service.deleteMailbox(ctx, request.params.project_id, request.params.address);
    return OK;
  });
}
