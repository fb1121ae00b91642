// The scheduled tasks module's job types (their handlers are paired with them in index.ts).
import { Type } from 'typebox';
import { defineJob } from '../../platform/jobs/types.ts';

/** Delivering one run's queued message to the room server, keyed by the run. */
export const deliverRunJob = defineJob({
  topic: 'scheduled-tasks.deliver',
  description: 'Sends a fired task\'s queued message to the room server and records the outcome on the run',
  key: 'the run id',
  payload: Type.Object({ project_id: Type.String({ format: 'uuid' }), run_id: Type.String({ pattern: '^[0-9]+$' }) }),
});
