// Invitations to a project: the admin's list, resend and revoke, and the invitee's side — the page
// the mail links to, and the JSON endpoints behind it (a client of its own may use them too).
import formbody from '@fastify/formbody';
import { Type } from 'typebox';
import type { AppContext } from '../../context.ts';
import { ApiError } from '../../platform/http/errors.ts';
import { LimitOffsetQuery, pageOf } from '../../platform/http/lists.ts';
import type { Api } from '../../platform/http/module.ts';
import { EmptyBody, ProjectParams, Uuid } from '../../platform/http/schemas.ts';
import * as invitations from './invitations.ts';
import * as schema from './schema.ts';

const tags = ['Project users'];
const InvitationParams = Type.Object({ project_id: Uuid, invitation_id: Uuid });
const publicRoute = { auth: { permission: 'public' as const } };

export function invitationRoutes(app: Api, ctx: AppContext): void {
  app.get('/accounts/projects/:project_id/invitations', {
    config: { auth: { permission: 'admin' } },
    schema: { tags, summary: 'List pending (and expired) invitations', params: ProjectParams, querystring: Type.Object(LimitOffsetQuery), response: { 200: schema.InvitationList } },
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

  // The page the mail links to: a form without script, posted back as a form.
  app.register(async (plain) => {
    const scope = plain as unknown as Api;
    await scope.register(formbody, { bodyLimit: 16_384 });
    scope.get('/signin/invitation', {
      config: publicRoute,
      schema: { tags, summary: 'The invitation page the mail links to (HTML)', querystring: Type.Object({ token: Type.Optional(schema.InvitationToken) }), response: { 200: Type.String(), 404: Type.String() } },
    }, async (request, reply) => {
      html(reply);
      const token = request.query.token ?? '';
      try {
        const info = await invitations.describeInvitation(ctx, token);
        return page(`Join ${info.project_name}`, `<p>You are invited to join <strong>${escape(info.project_name)}</strong> as <strong>${escape(info.email)}</strong>.</p>${form(token, info.account_exists)}`);
      } catch (error) {
        reply.status(404);
        return page('This invitation cannot be used', `<p>${escape(error instanceof ApiError ? error.message : 'Invitation not found')}.</p><p>Ask the project's admin to send a new one.</p>`);
      }
    });
    scope.post('/signin/invitation/form', {
      config: publicRoute,
      schema: { tags, summary: 'The invitation page\'s form (HTML)', body: schema.InvitationAccept, response: { 200: Type.String(), 400: Type.String(), 404: Type.String() } },
    }, async (request, reply) => {
      html(reply);
      try {
        const done = await invitations.acceptInvitation(ctx, request.body.token, request.body);
        return page('You have joined', `<p>${escape(done.email)} is now a member of the project.</p><p>Sign in to the app that invited you${done.account_created ? ' with this address and your new password' : ''}, or to the <a href="${escape(ctx.config.publicUrl)}/console">Atrium console</a>.</p>`);
      } catch (error) {
        if (!(error instanceof ApiError) || error.status >= 500) throw error;
        reply.status(error.status === 404 ? 404 : 400);
        return page('Could not join', `<p>${escape(error.message)}.</p>${error.status === 404 ? '' : form(request.body.token, false)}`);
      }
    });
  });
}

function html(reply: { header(name: string, value: string): unknown; type(t: string): unknown }): void {
  reply.type('text/html; charset=utf-8');
  reply.header('cache-control', 'no-store');
  reply.header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'");
  reply.header('referrer-policy', 'no-referrer');
  reply.header('x-content-type-options', 'nosniff');
}

const escape = (value: string) => value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function form(token: string, accountExists: boolean): string {
  const fields = accountExists
    ? '<p>This address already has an account: joining adds it to the project.</p>'
    : `<label>First name <input name="first_name" maxlength="200" autocomplete="given-name"></label>
<label>Last name <input name="last_name" maxlength="200" autocomplete="family-name"></label>
<label>Choose a password <input name="password" type="password" minlength="8" maxlength="1024" required autocomplete="new-password"></label>`;
  return `<form method="post" action="/signin/invitation/form"><input type="hidden" name="token" value="${escape(token)}">${fields}<button type="submit">Join the project</button></form>`;
}

/** A page in the sign-in pages' family (same footer), small enough to need no script or assets. */
function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${escape(title)} · Atrium</title>
<style>body{font-family:system-ui,sans-serif;margin:4rem auto;max-width:28rem;padding:0 1rem;line-height:1.5}label{display:block;margin:.75rem 0}input{display:block;width:100%;padding:.5rem;box-sizing:border-box}button{margin-top:1rem;padding:.6rem 1.2rem}@media (prefers-color-scheme:dark){body{background:#111;color:#eee}}</style></head>
<body><h1>${escape(title)}</h1>${body}<footer>Sign-in secured by Atrium</footer></body></html>`;
}
