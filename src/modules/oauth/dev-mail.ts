// The development mail outbox: without SMTP, in development, mail the service sends is kept in the
// database and shown at /dev/mail, so the quick start can follow confirmation and reset links.
// Never meant for production (docs/oauth.md).
import { Type } from 'typebox';
import type { AppContext } from '../../context.ts';
import { loopbackOnly } from '../../platform/http/loopback.ts';
import type { Api } from '../../module.ts';
import { Uuid } from '../../platform/http/schemas.ts';
import { findOutboxMail, listOutbox } from '../../platform/mail/mailer.ts';
import { errorPage, outboxMailPage, outboxPage } from './pages.ts';
import { Html, PAGE_ROUTE, sendPage } from './respond.ts';

export function devMailRoutes(route: Api, ctx: AppContext, issuer: string): void {
  if (ctx.config.mail.transport !== 'outbox') return;
  ctx.log.info({ url: `${issuer}/dev/mail` }, 'no SMTP server configured: mail is kept in the development outbox');

  route.get('/dev/mail', {
    config: PAGE_ROUTE,
    onRequest: loopbackOnly,
    schema: { tags: ['Development'], summary: 'Development mail outbox (only without SMTP, in development)', response: { 200: Html } },
  }, async (_request, reply) => sendPage(reply, outboxPage(await listOutbox(ctx.db))));

  route.get('/dev/mail/:id', {
    config: PAGE_ROUTE,
    onRequest: loopbackOnly,
    schema: { tags: ['Development'], summary: 'One mail of the development outbox', params: Type.Object({ id: Uuid }), response: { 200: Html, '4xx': Html } },
  }, async (request, reply) => {
    const mail = await findOutboxMail(ctx.db, request.params.id);
    if (!mail) return sendPage(reply, errorPage({ message: 'No such mail.', status: 404 }));
    return sendPage(reply, outboxMailPage({ ...mail, text: mail.textBody }));
  });
}
