// The sessions module's job types (their handlers are paired with them in index.ts).
import { Type } from 'typebox';
import { defineJob } from '../../platform/jobs/types.ts';

const SessionPayload = Type.Object({ project_id: Type.String({ format: 'uuid' }), session_id: Type.String({ format: 'uuid' }) });

/** The signed call asking the room server to end a session, retried until it is taken. */
export const terminateJob = defineJob({
  topic: 'sessions.terminate',
  description: 'Asks the room server to end a session and records the outcome on it',
  key: 'the session id',
  payload: SessionPayload,
});

/** Ends a terminating session whose end the room server has not reported in time. */
export const terminateTimeoutJob = defineJob({
  topic: 'sessions.terminate-timeout',
  description: 'Ends a terminating session that the room server has not reported ended (the terminate timeout after the request)',
  key: 'the session id',
  payload: SessionPayload,
});
