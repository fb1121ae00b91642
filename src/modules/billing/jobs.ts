// The billing module's job types (their handlers are paired with them in index.ts).
import { Type, type Static } from 'typebox';
import { defineJob } from '../../platform/jobs/types.ts';
import { LlmCall } from '../llm-proxy/events.ts';

const Uuid = Type.String({ format: 'uuid' });

/** What a pricing job carries of its call's event: the fields pricing reads, and no more. */
export const PricedCall = Type.Pick(LlmCall, [
  'request_id', 'provider', 'endpoint', 'model', 'requested_model', 'usage_source', 'usage', 'request_bytes', 'max_output_tokens', 'choices', 'user', 'annotations', 'started_at',
]);

/** What billing reads of an `llm.call.completed` event. */
export type CallUsage = Static<typeof PricedCall>;

/** Pricing one LLM proxy call, keyed by its event (queued once per call). */
export const priceJob = defineJob({
  topic: 'billing.price',
  description: 'Prices an LLM proxy call: the usage debit, rollup lines and the release of its reservation',
  key: 'the event id',
  payload: Type.Object({ project_id: Uuid, call: PricedCall }),
});

/** Pricing one ended room session's minutes, keyed by its event. */
export const sessionPriceJob = defineJob({
  topic: 'billing.price-session',
  description: 'Prices an ended room session\'s minutes',
  key: 'the event id',
  payload: Type.Object({ project_id: Uuid, session_id: Uuid }),
});

/** Charging one automatic recharge, keyed by the recharge. */
export const rechargeJob = defineJob({
  topic: 'billing.recharge',
  description: 'Charges an automatic recharge with the payment provider and credits the wallet',
  key: 'the recharge id',
  payload: Type.Object({ project_id: Uuid, recharge_id: Uuid }),
});
