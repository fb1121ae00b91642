// Rules for LLM loggers: the filter is JMESPath, compiled when a logger is created or changed (a
// bad one is a 400 with the parser's message); the destination is a feed of the same project.
// Copying happens in the background (copy.ts), never in the proxy's answer.
import { randomUUID } from 'node:crypto';
import { compile, TreeInterpreter, type JSONValue } from '@jmespath-community/jmespath';
import { LRUCache } from 'lru-cache';
import type { AppContext } from '../../context.ts';
import type { Actor } from '../../platform/http/authority.ts';
import { badRequest, notFound } from '../../platform/http/errors.ts';
import type { Page } from '../../platform/http/lists.ts';
import { feedToPublishInto } from '../feeds/service.ts';
import * as store from './store.ts';

type Filter = ReturnType<typeof compile>;

export function loggerView(logger: store.LoggerRow) {
  return {
    id: logger.id,
    project_id: logger.projectId,
    destination_feed_id: logger.destinationFeedId,
    filter_expression: logger.filterExpression,
    paused: logger.paused,
    annotations: logger.annotations,
    created_at: logger.createdAt.toISOString(),
    updated_at: logger.updatedAt.toISOString(),
  };
}

/** Compiled filters by expression text: parsed once, not per event. */
const filters = new LRUCache<string, Filter>({ max: 2000 });

function compileFilter(expression: string): Filter {
  let filter = filters.get(expression);
  if (filter) return filter;
  try {
    filter = compile(expression);
  } catch (error) {
    throw badRequest(`filter_expression is not valid JMESPath: ${(error as Error).message}`);
  }
  filters.set(expression, filter);
  return filter;
}

/** JMESPath's truth: false, null, and empty strings, arrays and objects are false; all else true. */
function truthy(value: JSONValue): boolean {
  if (value === null || value === false || value === '') return false;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === 'object') return Object.keys(value).length > 0;
  return true;
}

/** Whether an event matches a logger's filter. An expression that fails on this event does not match. */
export function matches(expression: string, event: Record<string, unknown>): boolean {
  try {
    return truthy(TreeInterpreter.search(compileFilter(expression), event as JSONValue));
  } catch {
    return false;
  }
}

export interface LoggerInput {
  destination_feed_id: string;
  filter_expression: string;
  paused?: boolean | null | undefined;
  annotations?: Record<string, string> | null | undefined;
}

async function checked(ctx: AppContext, actor: Actor, input: LoggerInput) {
  const filterExpression = input.filter_expression.trim();
  compileFilter(filterExpression);
  // The logger publishes into its destination: only a caller who may publish there sets it.
  if (!(await feedToPublishInto(ctx, actor, input.destination_feed_id))) throw badRequest('destination_feed_id: no such feed in this project');
  return { destinationFeedId: input.destination_feed_id, filterExpression, paused: input.paused ?? false, annotations: input.annotations ?? {} };
}

export async function createLogger(ctx: AppContext, actor: Actor, projectId: string, input: LoggerInput): Promise<store.LoggerRow> {
  return store.insertLogger(ctx.db, { id: randomUUID(), projectId, ...(await checked(ctx, actor, input)) });
}

export async function getLogger(ctx: AppContext, projectId: string, loggerId: string): Promise<store.LoggerRow> {
  const logger = await store.findLogger(ctx.db, projectId, loggerId);
  if (!logger) throw notFound('LLM logger');
  return logger;
}

export async function listLoggers(ctx: AppContext, projectId: string, page: Page) {
  const { items, total } = await store.listLoggers(ctx.db, projectId, page);
  return { loggers: items.map(loggerView), total };
}

/** Replaces a logger's settings (the SDK sends every field). */
export async function updateLogger(ctx: AppContext, actor: Actor, projectId: string, loggerId: string, input: LoggerInput): Promise<store.LoggerRow> {
  // A logger that is not there (or is another project's) is a 404 whatever the body says.
  await getLogger(ctx, projectId, loggerId);
  const logger = await store.updateLogger(ctx.db, projectId, loggerId, await checked(ctx, actor, input));
  if (!logger) throw notFound('LLM logger');
  return logger;
}

export async function deleteLogger(ctx: AppContext, projectId: string, loggerId: string): Promise<void> {
  if (!(await store.deleteLogger(ctx.db, projectId, loggerId))) throw notFound('LLM logger');
}
