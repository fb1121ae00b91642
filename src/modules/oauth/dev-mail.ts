// The development mail outbox: without SMTP, in development, mail the service sends is kept in the
// database and shown at /dev/mail, so the quick start can follow confirmation and reset links.
// Never meant for production (docs/oauth.md).
//
// Its mail signs anyone in as anyone, so it is shown only to requests from this machine that carry
// the mailbox's key: a proxy on the same machine (one that adds no X-Forwarded-For) makes every
// visitor look local, and the key, printed at start-up like the setup link, is what they lack.
import { timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { Type } from 'typebox';
import type { AppContext } from '../../context.ts';
import { isLoopbackClient } from '../../platform/http/loopback.ts';
import type { Api } from '../../module.ts';
import { Uuid } from '../../platform/http/schemas.ts';
import { findOutboxMail, listOutbox } from '../../platform/mail/mailer.ts';
import { deriveSigninKeys } from './keys.ts';
import { errorPage, outboxMailPage, outboxPage } from './pages.ts';
import { Html, PAGE_ROUTE, sendPage } from './respond.ts';
import { DEV_MAIL_PATH } from './service.ts';

const KeyQuery = Type.Object({ key: Type.Optional(Type.String({ maxLength: 100, description: 'The mailbox\'s key, from the link `atrium serve` prints' })) });

export function devMailRoutes(route: Api, ctx: AppContext, issuer: string): void {
  if (ctx.config.mail.transport !== 'outbox') return;
  const key = Buffer.from(deriveSigninKeys(ctx.config).devMailbox);
  const holdsKey = (given: unknown) => {
    const candidate = Buffer.from(typeof given === 'string' ? given : '');
    return candidate.length === key.length && timingSafeEqual(candidate, key);
  };
  // Anyone else gets the answer of an unknown route.
  const mailboxOnly = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    if (isLoopbackClient(request) && holdsKey((request.query as { key?: unknown }).key)) done();
    else reply.callNotFound();
  };
  const query = `?key=${key.toString()}`;
  ctx.log.info({ url: `${issuer}${DEV_MAIL_PATH}` }, 'no SMTP server configured: mail is kept in the development outbox (its link, with its key, is printed at start-up)');

  route.get(DEV_MAIL_PATH, {
    config: PAGE_ROUTE,
    onRequest: mailboxOnly,
    schema: { tags: ['Development'], summary: 'Development mail outbox (only without SMTP, in development; from this machine, with the key of the printed link)', querystring: KeyQuery, response: { 200: Html } },
  }, async (_request, reply) => sendPage(reply, outboxPage(await listOutbox(ctx.db), query)));

  route.get(`${DEV_MAIL_PATH}/:id`, {
    config: PAGE_ROUTE,
    onRequest: mailboxOnly,
    schema: { tags: ['Development'], summary: 'One mail of the development outbox', params: Type.Object({ id: Uuid }), querystring: KeyQuery, response: { 200: Html, '4xx': Html } },
  }, async (request, reply) => {
    const mail = await findOutboxMail(ctx.db, request.params.id);
    if (!mail) return sendPage(reply, errorPage({ message: 'No such mail.', status: 404 }));
    return sendPage(reply, outboxMailPage({ ...mail, text: mail.textBody }, query));
  });
}
