// The payment-provider interface and the local provider. The local provider (the embedded
// database's default, a development tool) moves no money: its checkout URL is a page on this server
// where a person confirms or cancels a test payment, choosing a test card that is saved for
// auto-recharge; charging a saved card succeeds or fails by the card's number, like a real
// provider's test cards.
import type { Config } from '../../../config.ts';

export interface CheckoutRequest {
  checkoutId: string;
  projectId: string;
  kind: 'credits' | 'subscription';
  amountMicros: bigint;
  successUrl: string;
  cancelUrl: string;
}

export interface ChargeResult {
  status: 'succeeded' | 'failed';
  providerRef: string;
  error?: string;
}

/** A provider's word that a checkout was paid, with what it says was paid: matched to the checkout before anything is credited. */
export interface CheckoutPaid {
  /** The provider's event id: each is processed once. */
  eventId: string;
  checkoutId: string;
  /** The provider's own id of the checkout (Stripe's Checkout Session id). */
  sessionId: string;
  /** The amount paid, in the currency's minor unit (cents). */
  amountMinor: number;
  /** The currency paid in, as the provider writes it (lower case for Stripe). */
  currency: string;
  /** The payment method to save for auto-recharge. */
  card: { ref: string; label: string } | undefined;
}

export interface PaymentProvider {
  readonly name: string;
  /** Starts a checkout; the person pays at the returned URL. */
  createCheckout(request: CheckoutRequest): Promise<{ url: string; providerRef: string }>;
  /** Charges a saved payment method off-session; the same idempotency key never charges twice. */
  chargeSavedMethod(methodRef: string, amountMicros: bigint, idempotencyKey: string): Promise<ChargeResult>;
  /** Verifies and reads a webhook delivery (providers that send them); throws on a bad signature. */
  parseWebhook?(rawBody: Buffer, signature: string | undefined): Promise<CheckoutPaid[]>;
}

/** Test cards of the local provider (the numbers Stripe's test mode uses for the same outcomes). */
export const TEST_CARDS: Record<string, { label: string; declined?: string }> = {
  '4242424242424242': { label: 'Test card ending 4242 (always succeeds)' },
  '4000000000000341': { label: 'Test card ending 0341 (checkout succeeds, later charges are declined)', declined: 'later' },
  '4000000000000002': { label: 'Test card ending 0002 (always declined)', declined: 'always' },
};

export const checkoutPath = (checkoutId: string) => `/billing/checkout/${checkoutId}`;

export function localProvider(config: Config): PaymentProvider {
  const charged = new Map<string, ChargeResult>();
  return {
    name: 'local',
    async createCheckout(request) {
      return { url: `${config.publicUrl}${checkoutPath(request.checkoutId)}`, providerRef: `local_cs_${request.checkoutId}` };
    },
    async chargeSavedMethod(methodRef, _amountMicros, idempotencyKey) {
      const before = charged.get(idempotencyKey);
      if (before) return before;
      const card = TEST_CARDS[methodRef];
      const result: ChargeResult = !card
        ? { status: 'failed', providerRef: `local_pi_${idempotencyKey}`, error: 'The saved payment method is unknown' }
        : card.declined
          ? { status: 'failed', providerRef: `local_pi_${idempotencyKey}`, error: 'The card was declined (test card)' }
          : { status: 'succeeded', providerRef: `local_pi_${idempotencyKey}` };
      charged.set(idempotencyKey, result);
      return result;
    },
  };
}
