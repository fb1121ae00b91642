// LLM loggers: create, list, fetch, replace and delete.
import type { Api } from '../../module.ts';
import type { AppContext } from '../../context.ts';
import { pageOf } from '../../platform/http/lists.ts';
import { Ok, OK, ProjectParams } from '../../platform/http/schemas.ts';
import { PUBLISHES_INTO_FEED } from '../feeds/service.ts';
import * as schema from './schema.ts';
import * as service from './service.ts';

const tags = ['LLM loggers'];
const loggers = '/accounts/projects/:project_id/llm-loggers';

export function loggerRoutes(app: Api, ctx: AppContext): void {
  // A logger publishes into its destination feed: setting it needs the caller's own right to publish there.
  app.post(loggers, {
    config: { auth: { permission: 'llm_logger_creator', within: PUBLISHES_INTO_FEED } },
    schema: {
      tags, summary: 'Create an LLM logger', params: ProjectParams, body: schema.LoggerInput, response: { 201: schema.LoggerEnvelope },
      description: '400 when filter_expression is not JMESPath (with the parser\'s message) or the destination feed is not in the project (or not seen by the caller); 403 unless the caller may publish to it (`feed.publish`).',
    },
  }, async (request, reply) => reply.status(201).send({ logger: service.loggerView(await service.createLogger(ctx, ctx.authority.actorOf(request), request.params.project_id, request.body)) }));

  app.get(loggers, {
    config: { auth: { permission: 'llm_logger_inventory' } },
    schema: { tags, summary: 'List LLM loggers', params: ProjectParams, querystring: schema.LoggerListQuery, response: { 200: schema.LoggerList } },
  }, async (request) => service.listLoggers(ctx, request.params.project_id, pageOf(request.query)));

  app.get(`${loggers}/:logger_id`, {
    config: { auth: { permission: 'llm_logger_inventory' } },
    schema: { tags, summary: 'Fetch an LLM logger', params: schema.LoggerParams, response: { 200: schema.LoggerEnvelope } },
  }, async (request) => ({ logger: service.loggerView(await service.getLogger(ctx, request.params.project_id, request.params.logger_id)) }));

  app.put(`${loggers}/:logger_id`, {
    config: { auth: { permission: 'llm_logger_manager', within: PUBLISHES_INTO_FEED } },
    schema: { tags, summary: 'Replace an LLM logger\'s settings', params: schema.LoggerParams, body: schema.LoggerInput, response: { 200: schema.LoggerEnvelope } },
  }, async (request) => ({ logger: service.loggerView(await service.updateLogger(ctx, ctx.authority.actorOf(request), request.params.project_id, request.params.logger_id, request.body)) }));

  app.delete(`${loggers}/:logger_id`, {
    config: { auth: { permission: 'llm_logger_manager' } },
    schema: { tags, summary: 'Delete an LLM logger', params: schema.LoggerParams, response: { 200: Ok } },
  }, async (request) => {
    await service.deleteLogger(ctx, request.params.project_id, request.params.logger_id);
    return OK;
  });
}
