// The outbox handlers of a terminate request: the signed call that asks the room server to end the
// session (retried on failure, its status on the session), and the timeout that ends the session if
// the room server never reports the end.
import type { AppContext } from '../../context.ts';
import { ROOM_SERVER_PATHS, type RoomServerClient } from '../../platform/http/room-server.ts';
import type { JobHandler } from '../../platform/jobs/worker.ts';
import { endTerminatedSession, TERMINATE_TIMEOUT_TOPIC, TERMINATE_TOPIC } from './service.ts';
import * as store from './store.ts';

export function terminateHandler(roomServer: RoomServerClient): JobHandler {
  return {
    topic: TERMINATE_TOPIC,
    async run(job, { signal, db }) {
      const projectId = String(job.payload.project_id);
      const sessionId = String(job.payload.session_id);
      // Nothing to send once the session has ended (reported meanwhile, or timed out).
      const session = await store.startTerminationAttempt(db, projectId, sessionId);
      if (!session) return {};
      const body = {
        id: sessionId,
        project_id: projectId,
        session_id: sessionId,
        room_id: session.roomId,
        room_name: session.roomName,
        requested_at: session.terminateRequestedAt!.toISOString(),
      };
      const outcome = await roomServer.send(ROOM_SERVER_PATHS.terminateSession, body, session.terminationAttempts, signal);
      if (outcome.ok) return { record: (tx) => store.recordTerminationOutcome(tx, projectId, sessionId, 'submitted', null) };
      if (outcome.retryAt) {
        return { retryAt: outcome.retryAt, error: outcome.error, record: (tx) => store.recordTerminationOutcome(tx, projectId, sessionId, 'retrying', outcome.error) };
      }
      return { record: (tx) => store.recordTerminationOutcome(tx, projectId, sessionId, 'failed', outcome.error) };
    },
  };
}

export function terminateTimeoutHandler(ctx: AppContext): JobHandler {
  return {
    topic: TERMINATE_TIMEOUT_TOPIC,
    async run(job, { db }) {
      await endTerminatedSession(ctx, db, String(job.payload.project_id), String(job.payload.session_id));
      return {};
    },
  };
}
