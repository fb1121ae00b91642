// Operational endpoints: liveness, readiness, metrics, the OpenAPI document and public keys.
import { Type } from 'typebox';
import type { Api } from '../../module.ts';
import type { AppContext } from '../../context.ts';
import { registry } from '../../platform/http/metrics.ts';

const publicRoute = { auth: { permission: 'public' as const } };
const Jwks = Type.Object({ keys: Type.Array(Type.Record(Type.String(), Type.Unknown())) });

export function systemRoutes(app: Api, ctx: AppContext): void {
  app.get('/healthz', {
    config: publicRoute,
    schema: { tags: ['System'], summary: 'Liveness', response: { 200: Type.Object({ ok: Type.Boolean() }) } },
  }, async () => ({ ok: true }));

  app.get('/readyz', {
    config: publicRoute,
    schema: { tags: ['System'], summary: 'Readiness: the database answers', response: { 200: Type.Object({ ok: Type.Boolean(), database: Type.String() }), 503: Type.Object({ ok: Type.Boolean(), database: Type.String() }) } },
  }, async (_request, reply) => {
    try {
      await ctx.database.ping();
      return { ok: true, database: ctx.database.engine };
    } catch {
      return reply.status(503).send({ ok: false, database: 'unreachable' });
    }
  });

  app.get('/metrics', {
    config: publicRoute,
    schema: { tags: ['System'], summary: 'Prometheus metrics', produces: ['text/plain'], response: { 200: Type.String({ description: 'Prometheus text exposition format' }) } },
  }, async (_request, reply) => reply.type(registry.contentType).send(await registry.metrics()));

  app.get('/openapi.json', {
    config: publicRoute,
    schema: { tags: ['System'], summary: 'This API as OpenAPI 3.1', hide: true, response: { 200: Type.Object({ openapi: Type.String() }, { additionalProperties: true }) } },
  }, async () => (await app.swagger()) as { openapi: string });

  app.get('/.well-known/jwks.json', {
    config: publicRoute,
    schema: { tags: ['Participant tokens'], summary: 'Public keys that verify participant tokens issued by Atrium', response: { 200: Jwks } },
  }, async () => ctx.keys.jwks());
}
