// First-run setup, used by the console's /console/setup page.
import { Type } from 'typebox';
import type { AppContext } from '../../context.ts';
import type { Api } from '../../module.ts';
import { auditOrigin } from '../../platform/http/audit.ts';
import { Name } from '../../platform/http/schemas.ts';
import { checkSetup, firstRunCookie, runSetup } from './service.ts';

const Token = Type.String({ maxLength: 100, description: 'The token of the setup link `atrium serve` prints on an empty database' });
const tags = ['First run'];
const publicRoute = { auth: { permission: 'public' as const } };

export function setupRoutes(app: Api, ctx: AppContext): void {
  app.post('/setup/check', {
    config: publicRoute,
    schema: {
      tags, summary: 'Whether the setup token is valid and the setup still open (403: wrong token; 404: an account exists; 409: the admin could not sign in on this server, the message names the setting)',
      body: Type.Object({ token: Token }), response: { 200: Type.Object({ open: Type.Boolean() }) },
    },
  }, async (request) => {
    await checkSetup(ctx, request.body.token);
    return { open: true };
  });

  app.post('/setup', {
    config: publicRoute,
    schema: {
      tags, summary: 'Create the first admin and their first project (only while no account exists)',
      description: 'The answer sets a short-lived cookie for the sign-in pages: the console\'s sign-in that follows signs the new admin in without asking for the password again.',
      body: Type.Object({
        token: Token,
        email: Type.String({ format: 'email', maxLength: 254 }),
        password: Type.String({ maxLength: 200 }),
        first_name: Type.Optional(Type.String({ maxLength: 200 })),
        last_name: Type.Optional(Type.String({ maxLength: 200 })),
        project_name: Name,
      }),
      response: { 201: Type.Object({ user_id: Type.String(), project_id: Type.String() }) },
    },
  }, async (request, reply) => {
    const created = await runSetup(ctx, request.body, auditOrigin(request));
    return reply.status(201).header('set-cookie', firstRunCookie(ctx, created.user_id)).send(created);
  });
}
