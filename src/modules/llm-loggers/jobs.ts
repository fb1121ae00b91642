// The LLM loggers module's job types (their handlers are paired with them in index.ts).
import { Type } from 'typebox';
import { defineJob } from '../../platform/jobs/types.ts';

const Uuid = Type.String({ format: 'uuid' });

/** Copying one call's event into one logger's feed, keyed by logger and event (one copy each). */
export const copyJob = defineJob({
  topic: 'llm-loggers.copy',
  description: 'Copies an LLM call\'s event into a logger\'s destination feed when the logger\'s filter matches',
  key: 'the logger id and the event id',
  payload: Type.Object({ project_id: Uuid, logger_id: Uuid, event_id: Uuid }),
});
