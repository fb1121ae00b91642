// Billing's request and response schemas. Amounts are decimal numbers of the currency in JSON
// (kept as integer micro-units inside).
import { Type } from 'typebox';
import { filterQuery, LimitOffsetQuery } from '../../platform/http/lists.ts';

const Amount = (description: string) => Type.Union([
  Type.Number({ minimum: 0, maximum: 1_000_000_000, description }),
  Type.String({ maxLength: 30, pattern: '^\\d{1,10}(\\.\\d{1,6})?$', 'x-pattern-means': 'must be a decimal number with at most 6 decimals', description }),
]);
const Money = (description: string) => Type.Number({ description });
const NullableMoney = (description: string) => Type.Union([Type.Number(), Type.Null()], { description });
const HttpUrl = (description: string) => Type.String({ minLength: 1, maxLength: 2000, description, examples: ['https://app.example.com/billing/done'] });

export const Balance = Type.Object({
  balance: Money('The ledger\'s sum'),
  reserved: Money('Held by LLM calls in flight'),
  available: Money('balance − reserved: what admission checks'),
  currency: Type.String(),
  auto_recharge_enabled: Type.Boolean(),
  auto_recharge_threshold: NullableMoney('Recharge when the balance falls below this'),
  auto_recharge_amount: NullableMoney('How much each auto-recharge buys'),
  monthly_budget: NullableMoney('Most auto-recharged in one calendar month (UTC); null: no cap'),
  auto_recharge_paused: Type.Boolean(),
  auto_recharge_paused_reason: Type.Union([Type.String(), Type.Null()], { description: 'Why auto-recharge is paused (failed charges)' }),
  auto_recharged_this_month: Money('Auto-recharged so far this calendar month'),
  last_recharge: Type.Union([Type.String(), Type.Null()]),
});

export const Transaction = Type.Object({
  id: Type.String(),
  amount: Money('Positive: credit; negative: debit'),
  balance_after: Money('The balance after this entry'),
  type: Type.String({ description: 'credit_purchase, auto_recharge, subscription_grant, usage_debit, adjustment or reversal' }),
  reference: Type.Union([Type.String(), Type.Null()]),
  reference_type: Type.Union([Type.String(), Type.Null()]),
  referenceType: Type.Union([Type.String(), Type.Null()], { description: 'The same as reference_type (the Dart SDK reads this name)' }),
  description: Type.String(),
  created_at: Type.String(),
});
export const TransactionList = Type.Object({ transactions: Type.Array(Transaction), total: Type.Integer() });
export const TransactionQuery = Type.Object({ ...LimitOffsetQuery, ...filterQuery('type or description') });

export const RechargeBody = Type.Object({
  enabled: Type.Boolean(),
  amount: Amount('Bought by each auto-recharge (greater than zero)'),
  threshold: Amount('Recharge when the balance falls below this (zero or more)'),
  monthly_budget: Type.Optional(Type.Union([Amount('Most auto-recharged in one calendar month (at least amount); null or absent: no cap'), Type.Null()])),
});

export const CreditsBody = Type.Object({
  success_url: HttpUrl('Where the payer goes after paying (absolute http(s) URL)'),
  cancel_url: HttpUrl('Where the payer goes after cancelling (absolute http(s) URL)'),
  quantity: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000, default: 1, description: 'Credits to buy, in whole currency units' })),
});
export const SubscriptionBody = Type.Object({
  success_url: HttpUrl('Where the payer goes after subscribing (absolute http(s) URL)'),
  cancel_url: HttpUrl('Where the payer goes after cancelling (absolute http(s) URL)'),
});
export const CheckoutUrl = Type.Object({ checkout_url: Type.String() });

export const Subscription = Type.Object({
  subscription: Type.Union([Type.Object({
    plan: Type.String(), status: Type.String(), monthly_credits: Type.Number(), currency: Type.String(), provider: Type.String(),
    current_period_start: Type.Union([Type.String(), Type.Null()]), created_at: Type.Union([Type.String(), Type.Null()]),
  }), Type.Null()]),
  payment_method: Type.Union([Type.String(), Type.Null()], { description: 'The saved card auto-recharge charges' }),
});

const Text = (description: string) => Type.Optional(Type.String({ maxLength: 500, description }));
export const UsageQuery = Type.Object({
  start: Type.Optional(Type.String({ maxLength: 40, description: 'ISO 8601; default: the start of this month (UTC)', examples: ['2026-01-01T00:00:00Z'] })),
  end: Type.Optional(Type.String({ maxLength: 40, description: 'ISO 8601, exclusive; default: now', examples: ['2026-01-08T00:00:00Z'] })),
  interval: Type.Optional(Type.Union([Type.Literal('hour'), Type.Literal('day'), Type.Literal('week'), Type.Literal('month')], { description: 'Bucket size, calendar-aligned in UTC (weeks start on Monday); default day' })),
  report: Text('Group by: comma-separated model, provider, user, room, usage_type'),
  users: Text('Only these user ids (comma-separated)'),
  room: Text('Only this room (the `room` annotation of the calls)'),
  provider: Text('Only this provider'),
  model: Text('Only this model'),
  usage_type: Text('Only this usage type: input, cached_input, cache_write, output, reasoning, request, session_minute, llm_proxy_surcharge, unreported'),
  annotations: Text('Accepted for SDK compatibility; not used for filtering'),
  client: Text('Accepted for SDK compatibility; not used for filtering'),
});
export const UsageReport = Type.Object({
  usage: Type.Array(Type.Object({
    start: Type.String(), end: Type.String(),
    model: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    provider: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    user: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    room: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    usage_type: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    requests: Type.Integer(),
    unpriced_requests: Type.Integer({ description: 'Calls of the bucket priced without a price for their model (recorded at no cost unless they reserved)' }),
    estimated_requests: Type.Integer({ description: 'Calls of the bucket whose provider reported no usage, billed what they reserved (usage type `unreported`)' }),
    quantities: Type.Record(Type.String(), Type.Number(), { description: 'Units by usage type (tokens; calls for `request`)' }),
    costs: Type.Record(Type.String(), Type.Number(), { description: 'Cost by usage type' }),
    cost: Type.Number(),
    total: Type.Number({ description: 'The same as cost' }),
  })),
  unpriced: Type.Array(Type.Object({ provider: Type.String(), model: Type.String(), requests: Type.Integer() }), { description: 'Models called in the range without a price, with how many calls' }),
  currency: Type.String(),
  interval: Type.String(),
  start: Type.String(),
  end: Type.String(),
});

export const Pricing = Type.Object({
  currency: Type.String(),
  as_of: Type.Union([Type.String(), Type.Null()]),
  source: Type.Union([Type.String(), Type.Null()]),
  unit: Type.String(),
  llm_proxy_surcharge_rate: Type.Number(),
  default_max_output_tokens: Type.Integer({ description: 'The output a call of a model whose entry declares no maximum can reserve' }),
  prices: Type.Array(Type.Object({
    provider: Type.String(),
    model: Type.String({ description: 'An exact name, or a prefix ending in `*` (`*` alone: the provider\'s fallback price)' }),
    aliases: Type.Array(Type.String(), { description: 'Other names priced as this model' }),
    max_output_tokens: Type.Union([Type.Integer(), Type.Null()], { description: 'The most output one answer can have: what a call without `max_tokens` reserves' }),
    effective_from: Type.Union([Type.String(), Type.Null()]),
    effective_to: Type.Union([Type.String(), Type.Null()]),
  }, { additionalProperties: Type.Number({ description: 'Price per 1,000,000 units of this usage type' }) })),
});

export const CheckoutParams = Type.Object({ checkout_id: Type.String({ format: 'uuid', maxLength: 36 }) });
export const CheckoutForm = Type.Object({
  action: Type.Union([Type.Literal('confirm'), Type.Literal('cancel')]),
  card: Type.Optional(Type.String({ maxLength: 40 })),
});
