// The delivery engine: the outbox handler for `webhooks.deliver` jobs. One run is one attempt of
// one delivery: build the exact body, sign it, POST it (15 s timeout, no redirects, SSRF-guarded),
// then record the attempt and decide what comes next, atomically with the job's own settlement.
//
// Retry policy (Standard Webhooks / Svix): retries after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and
// 10 h (about 27.6 h in all), each ±20 % jitter, never earlier than a Retry-After asks. 410 Gone
// disables the webhook at once; a webhook whose attempts have failed for five days straight is
// disabled too, with the reason on the webhook object.
//
// At-least-once: the job is settled only after the attempt is recorded; a crash anywhere before
// that leaves the job leased, and it runs again when the lease expires. The event id in the headers
// stays the same across retries, so receivers de-duplicate on it.
//
// Lock order: a record that changes the webhook does so before it touches the delivery, the order
// in which deleting a webhook takes them (the webhook's row, then its deliveries by cascade), so a
// delete while an attempt is recorded waits for it instead of deadlocking with it.
import { LRUCache } from 'lru-cache';
import type { AppContext } from '../../context.ts';
import type { EventRow } from '../../platform/events/store.ts';
import { OutboundClient, retryAfterMs, type OutboundResponse } from '../../platform/http/outbound.ts';
import type { JobOf, RunnerOf } from '../../platform/jobs/types.ts';
import { recordTogether, systemClock, type Clock, type JobContext, type JobResult, type RecordWriter } from '../../platform/jobs/worker.ts';
import { FULL_SCOPE, issueParticipantToken } from '../participant-tokens/service.ts';
import { roomUrl } from '../rooms/service.ts';
import { pythonJson, signatureHeader } from './body.ts';
import * as deliveries from './deliveries.ts';
import type { deliverJob } from './jobs.ts';
import * as store from './store.ts';

export const USER_AGENT = 'Atrium-Webhooks/1';
export const EXCERPT_BYTES = 1024;
/** Longest wait a Retry-After can impose. */
const MAX_RETRY_AFTER_MS = 24 * 3600_000;
/** Lifetime of the participant token in a room.call handoff. */
const CALL_TOKEN_TTL_SECONDS = 3600;

export interface DeliveryHandlerOptions {
  clock?: Clock;
  /** Jitter source in [0, 1). */
  random?: () => number;
}

type DeliverJob = JobOf<typeof deliverJob>;

export interface DeliveryHandler extends RunnerOf<typeof deliverJob> {
  close(): void;
}

/** The body of one delivery (exact bytes): the event envelope, or the room.call handoff. */
export async function deliveryBody(ctx: AppContext, webhook: store.WebhookRow, event: EventRow): Promise<Buffer> {
  let envelope: Record<string, unknown>;
  if (webhook.action === 'call') {
    const roomName = String(event.data.room_name);
    const token = issueParticipantToken(ctx, {
      projectId: webhook.projectId,
      name: webhook.name,
      grants: [{ name: 'room', scope: roomName }, { name: 'role', scope: 'agent' }, { name: 'api', scope: FULL_SCOPE }],
      ttlSeconds: CALL_TOKEN_TTL_SECONDS,
    });
    envelope = {
      event: 'room.call',
      data: { room_name: roomName, room_url: roomUrl(ctx, roomName), token, ...(webhook.payload ? { arguments: webhook.payload } : {}) },
    };
  } else {
    // The payload's keys go at top level, but `event` and `data` are always ours.
    const { event: _e, data: _d, ...extra } = webhook.payload ?? {};
    envelope = { event: event.type, data: event.data, ...extra };
  }
  return Buffer.from(pythonJson(envelope), 'utf8');
}

export function webhookDeliveryHandler(ctx: AppContext, options: DeliveryHandlerOptions = {}): DeliveryHandler {
  const clock = options.clock ?? systemClock;
  const random = options.random ?? Math.random;
  const settings = ctx.config.webhooks;
  const client = new OutboundClient({ allowPrivate: settings.allowPrivate });
  const attempts: RecordWriter<deliveries.ProjectAttempt> = { write: (tx, items) => deliveries.recordAttempts(tx, items) };
  // Decrypting is cheap, but every attempt needs it; cache by ciphertext (a new secret is a new key).
  const secrets = new LRUCache<string, string>({ max: 10_000 });
  const decrypt = (box: string) => {
    let plain = secrets.get(box);
    if (plain === undefined) secrets.set(box, (plain = ctx.secrets.decrypt(box)));
    return plain;
  };

  // Rows loaded for a claimed batch, by job id; `undefined` means "loaded: nothing there".
  const prefetched = new Map<string, deliveries.SendableDelivery | undefined>();

  async function prefetch(jobs: readonly DeliverJob[], { db }: JobContext): Promise<void> {
    const rows = await deliveries.loadManyForSend(db, jobs.map((j) => ({ projectId: j.payload.project_id, deliveryId: j.key })));
    for (const job of jobs) prefetched.set(job.id, rows.get(job.key));
  }

  async function run(job: DeliverJob, { signal, db }: JobContext): Promise<JobResult> {
    const projectId = job.payload.project_id;
    const deliveryId = job.key;
    const loaded = prefetched.has(job.id) ? prefetched.get(job.id) : await deliveries.loadForSend(db, projectId, deliveryId);
    prefetched.delete(job.id);
    // Deleted with its webhook, or already settled by an earlier run of a duplicate job.
    if (!loaded || loaded.delivery.status !== 'pending') return {};
    const { delivery, event, webhook } = loaded;
    if (!webhook.enabled) {
      return { record: (tx) => deliveries.cancelDelivery(tx, projectId, deliveryId, `Not sent: the webhook is disabled (${webhook.disabledReason ?? 'no reason given'})`) };
    }

    const attempt = delivery.attemptCount + 1;
    const body = await deliveryBody(ctx, webhook, event);
    const startedAt = clock.now();
    const iat = Math.floor(startedAt.getTime() / 1000);
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      'service-event-id': event.id,
      'service-event-timestamp': String(Math.floor(event.createdAt.getTime() / 1000)),
      'service-delivery-attempt': String(attempt),
    };
    if (webhook.secretEncrypted) headers['service-signature'] = signatureHeader(decrypt(webhook.secretEncrypted), body, iat);
    if (webhook.secretEncrypted && webhook.previousSecretEncrypted && webhook.previousSecretExpiresAt && webhook.previousSecretExpiresAt > startedAt) {
      headers['service-signature-previous'] = signatureHeader(decrypt(webhook.previousSecretEncrypted), body, iat);
    }

    const t0 = performance.now();
    let response: OutboundResponse | undefined;
    let error: string | null = null;
    try {
      response = await client.post(new URL(webhook.url), body, headers, { timeoutMs: settings.timeoutMs, excerptBytes: EXCERPT_BYTES, signal });
    } catch (failure) {
      // Stopping: let the worker release the job; it is sent again, by this or another instance.
      if (signal.aborted) throw failure;
      const { code, message } = failure as NodeJS.ErrnoException;
      error = code && !message.includes(code) ? `${code}: ${message}` : message;
    }
    const latencyMs = Math.round(performance.now() - t0);
    const now = clock.now();
    const status = response?.status ?? null;
    const succeeded = status !== null && status >= 200 && status < 300;
    if (response && !succeeded) {
      error = status! >= 300 && status! < 400
        ? `Redirects are not followed (HTTP ${status}${response.headers.location ? ` to ${response.headers.location}` : ''})`
        : `HTTP ${status}`;
    }
    const base = {
      deliveryId, attempt, trigger: delivery.nextTrigger, startedAt, latencyMs, succeeded,
      httpStatus: status, responseExcerpt: response ? response.excerpt : null, error,
    };

    if (succeeded && !webhook.failingSince) {
      // The common case: written together with the other successes of the settlement.
      return { recordTogether: recordTogether(attempts, { ...base, projectId, status: 'succeeded', nextAttemptAt: null }) };
    }
    if (succeeded) {
      return {
        record: async (tx) => {
          await store.setWebhookHealth(tx, projectId, webhook.id, { failingSince: null });
          await deliveries.recordAttempt(tx, projectId, { ...base, status: 'succeeded', nextAttemptAt: null });
        },
      };
    }

    if (status === 410) {
      const reason = `The endpoint answered 410 Gone at ${now.toISOString()}; re-enable the webhook to deliver again`;
      return {
        record: async (tx) => {
          await store.setWebhookHealth(tx, projectId, webhook.id, { disabledReason: reason });
          await deliveries.recordAttempt(tx, projectId, { ...base, status: 'failed', nextAttemptAt: null });
        },
      };
    }

    const failingSince = webhook.failingSince ?? startedAt;
    if (now.getTime() - failingSince.getTime() >= settings.disableAfterMs) {
      const reason = `Every delivery attempt has failed since ${failingSince.toISOString()} (last: ${error}); re-enable the webhook to deliver again`;
      return {
        record: async (tx) => {
          await store.setWebhookHealth(tx, projectId, webhook.id, { disabledReason: reason });
          await deliveries.recordAttempt(tx, projectId, { ...base, status: 'failed', nextAttemptAt: null });
        },
      };
    }

    const scheduled = settings.retrySchedule[attempt - 1];
    const retryAt = scheduled === undefined ? undefined : nextAttemptAt(now, scheduled, response ? retryAfterMs(response.headers['retry-after'], now) : undefined, random);
    return {
      retryAt,
      error: error ?? undefined,
      record: async (tx) => {
        if (!webhook.failingSince) await store.setWebhookHealth(tx, projectId, webhook.id, { failingSince: startedAt });
        await deliveries.recordAttempt(tx, projectId, { ...base, status: retryAt ? 'pending' : 'failed', nextAttemptAt: retryAt ?? null });
      },
    };
  }

  return { run, prefetch, close: () => client.close() };
}

/** The scheduled delay with ±20 % jitter, but never earlier than Retry-After (capped at a day). */
export function nextAttemptAt(now: Date, scheduledMs: number, retryAfter: number | undefined, random: () => number = Math.random): Date {
  const jittered = Math.round(scheduledMs * (0.8 + 0.4 * random()));
  const wait = Math.max(jittered, Math.min(retryAfter ?? 0, MAX_RETRY_AFTER_MS));
  return new Date(now.getTime() + wait);
}
