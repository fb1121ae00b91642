// Minting participant tokens for a project, and validating them for room servers.
import { Type } from 'typebox';
import type { Api } from '../../module.ts';
import type { AppContext } from '../../context.ts';
import { ProjectParams } from '../../platform/http/schemas.ts';
import { grantsWithin, issueParticipantToken, validateParticipantToken } from './service.ts';

const tags = ['Participant tokens'];

const Grant = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 100, description: 'room, role, api, tunnel_ports, site, agent…' }),
  scope: Type.Unknown({ description: 'A room name, a role, or an ApiScope object' }),
});

const TokenCreate = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200, description: 'Participant identity' }),
  grants: Type.Optional(Type.Array(Grant, { maxItems: 50 })),
  expires_in_seconds: Type.Optional(Type.Integer({ minimum: 60, maximum: 30 * 24 * 3600, default: 3600 })),
});

const Claims = Type.Object({
  name: Type.String(),
  grants: Type.Array(Grant),
  sub: Type.String({ description: 'Project id' }),
  kid: Type.Optional(Type.String()),
  version: Type.Optional(Type.String()),
  iat: Type.Optional(Type.Integer()),
  exp: Type.Optional(Type.Integer()),
  iss: Type.Optional(Type.String()),
}, { additionalProperties: true });

export function participantTokenRoutes(app: Api, ctx: AppContext): void {
  app.post('/accounts/projects/:project_id/participant-tokens', {
    config: { auth: { permission: 'developer' } },
    schema: {
      tags, summary: 'Mint a participant token for this project', params: ProjectParams, body: TokenCreate, response: { 200: Type.Object({ token: Type.String() }) },
      description: 'The grants may not go beyond what the caller may do itself (403 naming the first that does): in the rooms they name, what connect gives the caller; `llm` only for holders of `llm_proxy_user`; a feed only where the caller may publish.',
    },
  }, async (request) => ({
    token: issueParticipantToken(ctx, {
      projectId: request.params.project_id,
      name: request.body.name,
      grants: await grantsWithin(ctx, ctx.authority.actorOf(request), (request.body.grants ?? []).map((g) => ({ name: g.name, scope: g.scope }))),
      ttlSeconds: request.body.expires_in_seconds ?? 3600,
    }),
  }));

  app.post('/api/participant-token/validate', {
    config: { auth: { permission: 'public' } },
    schema: {
      tags,
      summary: 'Validate a participant token (ours, or one an application signed with an API key) and return its claims',
      description: 'A token an API key signed comes back with the grants that key may give now: a grant beyond it (a room it cannot join, a surface it may not use there, `llm` without `llm_proxy_user`, a feed it may not publish to) is left out.',
      body: Type.Object({ token: Type.String({ minLength: 1, maxLength: 16_384 }) }),
      response: { 200: Claims },
    },
  }, async (request) => validateParticipantToken(ctx, request.body.token));
}
