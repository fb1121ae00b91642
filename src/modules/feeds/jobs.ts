// The feeds module's job types (their handlers are paired with them in index.ts).
import { Type } from 'typebox';
import { defineJob } from '../../platform/jobs/types.ts';

/** Writing a subscription's waiting messages into its room's storage as one file. */
export const flushJob = defineJob({
  topic: 'feeds.flush',
  description: 'Writes the messages waiting for a subscription into its room\'s storage as one JSON Lines file',
  payload: Type.Object({ subscription_id: Type.String({ format: 'uuid' }) }),
});
