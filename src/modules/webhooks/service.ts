// Rules for webhooks: what may be registered (known events, reachable public URLs, bounded
// payloads), signing secrets (shown once, stored encrypted, rotated with an overlap), the delivery
// history and manual redelivery.
import { randomUUID } from 'node:crypto';
import type { AppContext } from '../../context.ts';
import { randomSecret } from '../../platform/crypto/secrets.ts';
import { apiError, badRequest, conflict, notFound } from '../../platform/http/errors.ts';
import type { Page } from '../../platform/http/lists.ts';
import { checkTargetUrl } from '../../platform/http/outbound.ts';
import { eventsTable } from '../../platform/events/store.ts';
import { enqueue } from '../../platform/jobs/outbox.ts';
import { ALL_EVENTS } from '../../platform/events/catalogue.ts';
import { deliverJob } from './jobs.ts';
import { MAX_PAYLOAD_TEXT, MIN_SECRET_LENGTH } from './schema.ts';
import * as deliveries from './deliveries.ts';
import * as store from './store.ts';

/** Webhooks per project: each event fans out to all of them. */
export const MAX_WEBHOOKS_PER_PROJECT = 100;
/** Attempts shown per delivery in the history. */
const ATTEMPTS_SHOWN = 20;

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function webhookView(row: store.WebhookRow, newSecret?: string) {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    url: row.url,
    events: row.events,
    action: row.action,
    payload: row.payload ?? null,
    enabled: row.enabled,
    disabled_reason: row.disabledReason,
    has_secret: row.secretEncrypted !== null,
    previous_secret_expires_at: row.previousSecretEncrypted && row.previousSecretExpiresAt && row.previousSecretExpiresAt > new Date() ? row.previousSecretExpiresAt.toISOString() : null,
    ...(newSecret !== undefined ? { secret: newSecret } : {}),
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

export interface WebhookInput {
  name?: string | undefined;
  description?: string | null | undefined;
  url?: string | undefined;
  events?: string[] | undefined;
  action?: '' | 'call' | null | undefined;
  payload?: Record<string, unknown> | string | null | undefined;
  secret?: string | boolean | null | undefined;
  enabled?: boolean | undefined;
}

function normaliseEvents(ctx: AppContext, events: string[]): string[] {
  const unknown = events.filter((e) => e !== ALL_EVENTS && !ctx.events.definition(e));
  if (unknown.length > 0) {
    const known = [...ctx.events.definitions.map((d) => d.type), ALL_EVENTS];
    throw badRequest(`Unknown event type ${JSON.stringify(unknown[0])}; known types: ${known.join(', ')}`, 'unknown_event');
  }
  return events.includes(ALL_EVENTS) ? [ALL_EVENTS] : [...new Set(events)];
}

function normalisePayload(payload: Record<string, unknown> | string | null): Record<string, unknown> | null {
  if (payload === null || payload === '') return null;
  if (typeof payload !== 'string') {
    // It travels with every delivery: keep it small.
    if (Buffer.byteLength(JSON.stringify(payload)) > MAX_PAYLOAD_TEXT) throw badRequest(`payload must serialise to at most ${MAX_PAYLOAD_TEXT} bytes`, 'invalid_payload');
    return payload;
  }
  // Some SDKs type the payload as a string: accept one that holds a JSON object.
  let parsed: unknown;
  try {
    parsed = JSON.parse(payload);
  } catch {
    throw badRequest('payload must be a JSON object, null or ""', 'invalid_payload');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw badRequest('payload must be a JSON object, null or ""', 'invalid_payload');
  return parsed as Record<string, unknown>;
}

async function validateUrl(ctx: AppContext, raw: string): Promise<string> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw badRequest('url must be an absolute http(s) URL', 'invalid_url');
  }
  const problem = await checkTargetUrl(url, { allowPrivate: ctx.config.webhooks.allowPrivate });
  if (problem) throw badRequest(`url ${problem}`, 'invalid_url');
  return url.toString();
}

/** The secret change an input asks for: a new plaintext, removal (null), or none (undefined). */
function secretChange(secret: string | boolean | null | undefined): string | null | undefined {
  if (secret === true) return randomSecret(32);
  if (secret === false) return null;
  if (secret === undefined || secret === null || secret === '') return undefined;
  if (secret.length < MIN_SECRET_LENGTH) throw badRequest(`secret must have at least ${MIN_SECRET_LENGTH} characters (or send true to have one generated)`, 'weak_secret');
  return secret;
}

function checkCall(ctx: AppContext, action: string, events: string[]): void {
  if (action === 'call' && !events.some((e) => e === ALL_EVENTS || ctx.events.definition(e)?.room)) {
    const roomEvents = ctx.events.definitions.filter((d) => d.room).map((d) => d.type);
    throw badRequest(`A "call" webhook hands off room events: subscribe to ${roomEvents.join(', ')} or *`, 'invalid_action');
  }
}

export async function createWebhook(ctx: AppContext, projectId: string, input: WebhookInput & { name: string; url: string; events: string[] }) {
  const events = normaliseEvents(ctx, input.events);
  const action = input.action ?? '';
  checkCall(ctx, action, events);
  const payload = normalisePayload(input.payload ?? null);
  const url = await validateUrl(ctx, input.url);
  const secret = secretChange(input.secret);
  const row = await ctx.db.transaction(async (tx) => {
    if ((await store.countWebhooks(tx, projectId)) >= MAX_WEBHOOKS_PER_PROJECT) {
      throw conflict(`A project has at most ${MAX_WEBHOOKS_PER_PROJECT} webhooks`, 'limit_reached');
    }
    return store.insertWebhook(tx, {
      id: randomUUID(),
      projectId,
      name: input.name,
      description: input.description ?? '',
      url,
      events,
      action,
      payload,
      secretEncrypted: secret ? ctx.secrets.encrypt(secret) : null,
    });
  });
  return webhookView(row, secret ?? undefined);
}

export async function listWebhooks(ctx: AppContext, projectId: string, filter?: string) {
  return { webhooks: (await store.listWebhooks(ctx.db, projectId, filter || undefined)).map((w) => webhookView(w)) };
}

export async function updateWebhook(ctx: AppContext, projectId: string, webhookId: string, input: WebhookInput) {
  const current = await store.findWebhook(ctx.db, projectId, webhookId);
  if (!current) throw notFound('Webhook');
  const events = input.events ? normaliseEvents(ctx, input.events) : current.events;
  const action = input.action === undefined ? current.action : (input.action ?? '');
  checkCall(ctx, action, events);
  const secret = secretChange(input.secret);
  const changes: Partial<store.WebhookRow> = {
    ...(input.name !== undefined ? { name: input.name } : {}),
    ...(input.description !== undefined ? { description: input.description ?? '' } : {}),
    ...(input.url !== undefined ? { url: await validateUrl(ctx, input.url) } : {}),
    events,
    action,
    ...(input.payload !== undefined ? { payload: normalisePayload(input.payload) } : {}),
    // Setting a secret here replaces it at once; rotate-secret keeps the old one signing for a while.
    ...(secret !== undefined ? { secretEncrypted: secret === null ? null : ctx.secrets.encrypt(secret), previousSecretEncrypted: null, previousSecretExpiresAt: null } : {}),
    ...(input.enabled === true ? { enabled: true, disabledReason: null, failingSince: null } : {}),
    ...(input.enabled === false ? { enabled: false, disabledReason: 'Disabled by a project user' } : {}),
  };
  const row = await store.updateWebhook(ctx.db, projectId, webhookId, changes);
  if (!row) throw notFound('Webhook');
  return webhookView(row, secret ?? undefined);
}

export async function deleteWebhook(ctx: AppContext, projectId: string, webhookId: string): Promise<void> {
  if (!(await store.deleteWebhook(ctx.db, projectId, webhookId))) throw notFound('Webhook');
}

/** A new secret signs from now on; the old one keeps signing as well until the overlap ends. */
export async function rotateSecret(ctx: AppContext, projectId: string, webhookId: string, input: { secret?: string | undefined; overlap_seconds?: number | undefined }) {
  const secret = input.secret ?? randomSecret(32);
  const overlapMs = (input.overlap_seconds ?? 86400) * 1000;
  const row = await ctx.db.transaction(async (tx) => {
    const current = await store.findWebhookForUpdate(tx, projectId, webhookId);
    if (!current) throw notFound('Webhook');
    return store.updateWebhook(tx, projectId, webhookId, {
      secretEncrypted: ctx.secrets.encrypt(secret),
      previousSecretEncrypted: current.secretEncrypted && overlapMs > 0 ? current.secretEncrypted : null,
      previousSecretExpiresAt: current.secretEncrypted && overlapMs > 0 ? new Date(Date.now() + overlapMs) : null,
    });
  });
  return webhookView(row!, secret);
}

function deliveryView(d: deliveries.DeliveryRow & { eventType: string; eventData: Record<string, unknown> }, attempts: deliveries.AttemptRow[]) {
  return {
    id: d.id,
    webhook_id: d.webhookId,
    event_id: d.eventId,
    event: d.eventType,
    data: d.eventData,
    status: d.status,
    attempt_count: d.attemptCount,
    next_attempt_at: d.status === 'pending' ? iso(d.nextAttemptAt) : null,
    last_attempt_at: iso(d.lastAttemptAt),
    last_http_status: d.lastHttpStatus,
    last_error: d.lastError,
    created_at: d.createdAt.toISOString(),
    attempts: attempts.map((a) => ({
      attempt: a.attempt,
      trigger: a.trigger,
      started_at: a.startedAt.toISOString(),
      latency_ms: a.latencyMs,
      succeeded: a.succeeded,
      http_status: a.httpStatus,
      response_excerpt: a.responseExcerpt,
      error: a.error,
    })),
  };
}

export async function listDeliveries(ctx: AppContext, projectId: string, webhookId: string, page: Page & { status?: deliveries.DeliveryStatus | undefined }) {
  if (!(await store.findWebhook(ctx.db, projectId, webhookId))) throw notFound('Webhook');
  const { rows, total } = await deliveries.listDeliveries(ctx.db, projectId, webhookId, page);
  const attempts = await deliveries.attemptsOf(ctx.db, projectId, rows.map((r) => r.id), ATTEMPTS_SHOWN);
  return { deliveries: rows.map((r) => deliveryView(r, attempts.get(r.id) ?? [])), total };
}

/** Queues one more attempt now, whatever the delivery's state; the retry schedule continues after it. */
export async function redeliver(ctx: AppContext, projectId: string, webhookId: string, deliveryId: string) {
  const webhook = await store.findWebhook(ctx.db, projectId, webhookId);
  if (!webhook) throw notFound('Webhook');
  if (!webhook.enabled) throw apiError('webhook_disabled');
  await ctx.db.transaction(async (tx) => {
    const delivery = await deliveries.findDelivery(tx, projectId, webhookId, deliveryId);
    if (!delivery) throw notFound('Delivery');
    const now = new Date();
    const queued = await enqueue(tx, deliverJob.of({ key: deliveryId, payload: { project_id: projectId } }), { onConflict: 'reschedule' });
    if (queued === 0) throw conflict('An attempt of this delivery is in progress; try again when it has finished', 'in_progress');
    await deliveries.requestRedelivery(tx, projectId, deliveryId, now);
  });
  const delivery = (await deliveries.findDelivery(ctx.db, projectId, webhookId, deliveryId))!;
  const attempts = await deliveries.attemptsOf(ctx.db, projectId, [deliveryId], ATTEMPTS_SHOWN);
  return deliveryView(delivery, attempts.get(deliveryId) ?? []);
}

/** The event type of a test delivery; no consumer of real events ever sees it. */
export const TEST_EVENT_TYPE = 'webhook.test';

/**
 * Sends a signed `webhook.test` delivery to this one webhook now, whatever its events: it goes
 * through the same queue, signing, retries and history as any delivery.
 */
export async function sendTestEvent(ctx: AppContext, projectId: string, webhookId: string) {
  const webhook = await store.findWebhook(ctx.db, projectId, webhookId);
  if (!webhook) throw notFound('Webhook');
  if (!webhook.enabled) throw apiError('webhook_disabled');
  if (webhook.action === 'call') throw badRequest('A "call" webhook hands off room events to a room; it takes no test event', 'invalid_action');
  const deliveryId = randomUUID();
  await ctx.db.transaction(async (tx) => {
    const eventId = randomUUID();
    const now = new Date();
    await tx.insert(eventsTable).values({ id: eventId, projectId, type: TEST_EVENT_TYPE, data: { webhook_id: webhookId, message: 'A test event sent on request' }, createdAt: now });
    await tx.insert(deliveries.webhookDeliveriesTable).values({ id: deliveryId, projectId, webhookId, eventId, nextAttemptAt: now, createdAt: now });
    await enqueue(tx, deliverJob.of({ key: deliveryId, payload: { project_id: projectId } }));
  });
  const delivery = (await deliveries.findDelivery(ctx.db, projectId, webhookId, deliveryId))!;
  return deliveryView(delivery, []);
}
