// LLM loggers: copy the events of LLM proxy calls that match a JMESPath filter into a feed.
import type { Module } from '../../module.ts';
import { handles } from '../../platform/jobs/types.ts';
import { copyHandler, loggerConsumer } from './copy.ts';
import { copyJob } from './jobs.ts';
import { loggerRoutes } from './routes.ts';

export const llmLoggersModule: Module = {
  name: 'llm-loggers',
  routes: loggerRoutes,
  jobs: [handles(copyJob, copyHandler)],
  eventConsumers: () => [loggerConsumer],
};
