// The webhook receiver helper: a small server for Atrium's deliveries, and the signature check on
// its own for use inside any other framework.
export { createWebhookReceiver, type WebhookHandlers, type WebhookReceiver, type WebhookReceiverOptions, type WebhookRejection } from './server.ts';
export { verifyWebhookSignature, WebhookSignatureError, type SignatureFailure, type VerifiedSignature, type VerifyWebhookSignatureOptions } from './verify.ts';
export type * from './types.ts';
