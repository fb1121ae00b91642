// The page the invitation mail links to, and its form: on the sign-in pages' layout (pages.ts),
// with no script. Joining — the account created unless the address has one, the membership — is
// the projects module's (its JSON door, /invitations/accept, is the same service call). The routes
// keep their place in the API reference, beside that door.
import { Type } from 'typebox';
import type { AppContext } from '../../../context.ts';
import { ApiError } from '../../../platform/http/errors.ts';
import type { Api } from '../../../module.ts';
import { acceptInvitation, describeInvitation } from '../../projects/service.ts';
import { InvitationAccept, InvitationToken } from '../../projects/schema.ts';
import { INVITATION_PATH, invitationAcceptedPage, invitationGonePage, invitationPage, type Page } from '../pages.ts';
import { Html, PAGE_ROUTE, sendPage } from '../respond.ts';

const tags = ['Project users'];

/** An API message as a sentence on a page: "password is required" → "Password is required." */
const sentence = (message: string) => `${message.charAt(0).toUpperCase()}${message.slice(1)}${/[.!?]$/.test(message) ? '' : '.'}`;

/** What the link is for, or the page saying it cannot be used (an ApiError of 4xx is the reason). */
async function invitationOf(ctx: AppContext, token: string): Promise<{ token: string; projectName: string; email: string; accountExists: boolean } | Page> {
  try {
    const info = await describeInvitation(ctx, token);
    return { token, projectName: info.project_name, email: info.email, accountExists: info.account_exists };
  } catch (error) {
    if (!(error instanceof ApiError) || error.status >= 500) throw error;
    return invitationGonePage(sentence(error.message));
  }
}

export function invitationRoutes(route: Api, ctx: AppContext): void {
  route.get(INVITATION_PATH, {
    config: PAGE_ROUTE,
    schema: { tags, summary: 'The invitation page the mail links to (HTML)', querystring: Type.Object({ token: Type.Optional(InvitationToken) }), response: { 200: Html, 404: Html } },
  }, async (request, reply) => {
    const invitation = await invitationOf(ctx, request.query.token ?? '');
    return sendPage(reply, 'html' in invitation ? invitation : invitationPage(invitation));
  });

  route.post(`${INVITATION_PATH}/form`, {
    config: PAGE_ROUTE,
    schema: { tags, summary: 'The invitation page\'s form (HTML)', body: InvitationAccept, response: { 200: Html, 400: Html, 404: Html } },
  }, async (request, reply) => {
    const { token, first_name: firstName, last_name: lastName } = request.body;
    try {
      const done = await acceptInvitation(ctx, token, request.body);
      return sendPage(reply, invitationAcceptedPage({ email: done.email, accountCreated: done.account_created, consoleUrl: `${ctx.config.publicUrl}/console` }));
    } catch (error) {
      if (!(error instanceof ApiError) || error.status >= 500) throw error;
      if (error.status === 404) return sendPage(reply, invitationGonePage(sentence(error.message)));
      // Refused (a password too short…): the same page again, saying why, with what was typed.
      const invitation = await invitationOf(ctx, token);
      return sendPage(reply, 'html' in invitation ? invitation : invitationPage({ ...invitation, error: sentence(error.message), status: 400, firstName, lastName }));
    }
  });
}
