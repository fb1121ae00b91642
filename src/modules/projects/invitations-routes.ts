// Invitations to a project: the admin's list, resend and revoke, and the invitee's side as JSON (a
// client of its own may use it). The page the mail links to is among the sign-in pages, on their
// layout: src/modules/oauth/signin/invitation.ts.
import { Type } from 'typebox';
import type { AppContext } from '../../context.ts';
import { filterQuery, LimitOffsetQuery, pageOf } from '../../platform/http/lists.ts';
import type { Api } from '../../module.ts';
import { EmptyBody, ProjectParams, Uuid } from '../../platform/http/schemas.ts';
import * as invitations from './invitations.ts';
import * as schema from './schema.ts';

const tags = ['Project users'];
const InvitationParams = Type.Object({ project_id: Uuid, invitation_id: Uuid });
const publicRoute = { auth: { permission: 'public' as const } };

export function invitationRoutes(app: Api, ctx: AppContext): void {
  app.get('/accounts/projects/:project_id/invitations', {
    config: { auth: { permission: 'admin' } },
    schema: { tags, summary: 'List pending (and expired) invitations', params: ProjectParams, querystring: Type.Object({ ...LimitOffsetQuery, ...filterQuery('email address') }), response: { 200: schema.InvitationList } },
  }, async (request) => invitations.listInvitations(ctx, request.params.project_id, pageOf(request.query)));

  app.post('/accounts/projects/:project_id/invitations/:invitation_id/resend', {
    config: { auth: { permission: 'admin' } },
    schema: { tags, summary: 'Send the invitation again with a new link and a new expiry (the old link stops working)', params: InvitationParams, body: EmptyBody, response: { 200: schema.Invitation } },
  }, async (request) => invitations.resendInvitation(ctx, request.params.project_id, request.params.invitation_id, request.principal?.userId));

  app.delete('/accounts/projects/:project_id/invitations/:invitation_id', {
    config: { auth: { permission: 'admin' } },
    schema: { tags, summary: 'Revoke an invitation: its link stops working', params: InvitationParams, response: { 200: Type.Object({ ok: Type.Boolean() }) } },
  }, async (request) => {
    await invitations.revokeInvitation(ctx, request.params.project_id, request.params.invitation_id);
    return { ok: true };
  });

  app.post('/invitations/check', {
    config: publicRoute,
    schema: { tags, summary: 'What an invitation link is for (404 when revoked, used, replaced or expired)', body: Type.Object({ token: schema.InvitationToken }), response: { 200: schema.InvitationInfo } },
  }, async (request) => invitations.describeInvitation(ctx, request.body.token));

  app.post('/invitations/accept', {
    config: publicRoute,
    schema: { tags, summary: 'Accept an invitation: create the account (unless the address has one) and join the project', body: schema.InvitationAccept, response: { 200: schema.InvitationAccepted } },
  }, async (request) => invitations.acceptInvitation(ctx, request.body.token, request.body));
}

