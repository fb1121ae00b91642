// The outbox handlers of a terminate request: the signed call that asks the room server to end the
// session (retried on failure, its status on the session), and the timeout that ends the session if
// the room server never reports the end.
import type { AppContext } from '../../context.ts';
import { ROOM_SERVER_PATHS, RoomServerClient } from '../../platform/http/room-server.ts';
import type { RunnerOf } from '../../platform/jobs/types.ts';
import type { terminateJob, terminateTimeoutJob } from './jobs.ts';
import { endTerminatedSession } from './service.ts';
import * as store from './store.ts';

export function terminateHandler(ctx: AppContext): RunnerOf<typeof terminateJob> {
  const roomServer = new RoomServerClient({ baseUrl: ctx.config.roomServer.url, issuer: ctx.config.publicUrl, keys: ctx.keys });
  return {
    close: () => roomServer.close(),
    async run({ payload: { project_id: projectId, session_id: sessionId } }, { signal, db }) {
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

export function terminateTimeoutHandler(ctx: AppContext): RunnerOf<typeof terminateTimeoutJob> {
  return {
    async run({ payload }, { db }) {
      await endTerminatedSession(ctx, db, payload.project_id, payload.session_id);
      return {};
    },
  };
}
