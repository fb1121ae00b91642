// The webhooks module's job types (their handlers are paired with them in index.ts).
import { Type } from 'typebox';
import { defineJob } from '../../platform/jobs/types.ts';

/** One attempt of one webhook delivery, keyed by the delivery (so a delivery has one live job). */
export const deliverJob = defineJob({
  topic: 'webhooks.deliver',
  description: 'Sends one attempt of a webhook delivery and records it',
  key: 'the delivery id',
  payload: Type.Object({ project_id: Type.String({ format: 'uuid' }) }),
});
