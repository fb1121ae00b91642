// Verification of Atrium's webhook signature, usable from any framework: `Service-Signature:
// Bearer <jwt>`, an HS256 JWT keyed by the secret's UTF-8 bytes whose `sha256` claim is the
// lowercase hex SHA-256 of the exact bytes received. Hashing what arrived (never a re-serialised
// parse) is the point: two JSON encoders rarely agree byte for byte.
import { createHash, timingSafeEqual } from 'node:crypto';
import { errors, jwtVerify, type JWTPayload } from 'jose';

export type SignatureFailure = 'missing' | 'malformed' | 'invalid' | 'expired' | 'body_mismatch';

export class WebhookSignatureError extends Error {
  readonly reason: SignatureFailure;
  constructor(reason: SignatureFailure, message: string) {
    super(message);
    this.name = 'WebhookSignatureError';
    this.reason = reason;
  }
}

export interface VerifyWebhookSignatureOptions {
  /** The webhook's signing secret; several are tried in turn while a receiver changes secrets. */
  secret: string | readonly string[];
  /** The raw body (or, for the websocket handoff, the `Service-Webhook` header value). A string is taken as its UTF-8 bytes. */
  body: Uint8Array | string;
  /** The `Service-Signature` header value, `Bearer <jwt>`. */
  header: string | undefined | null;
  /** `Service-Signature-Previous`, sent during a secret rotation and signed with the old secret. */
  previousHeader?: string | undefined | null;
  /** The verifying clock; defaults to now. */
  now?: Date | number;
  /** Seconds of clock skew allowed on `exp`/`nbf`; 30 by default. */
  clockTolerance?: number;
}

export interface VerifiedSignature {
  claims: JWTPayload & { sha256: string };
}

const BEARER = /^Bearer[ \t]+([^\s]+)[ \t]*$/i;
const encoder = new TextEncoder();

/**
 * Resolves with the token's claims when `header` or `previousHeader` carries a valid, unexpired
 * signature of `body` under one of the secrets; rejects with a WebhookSignatureError otherwise.
 */
export async function verifyWebhookSignature(options: VerifyWebhookSignatureOptions): Promise<VerifiedSignature> {
  const secrets = (typeof options.secret === 'string' ? [options.secret] : [...options.secret]).filter((s) => s.length > 0);
  if (secrets.length === 0) throw new TypeError('verifyWebhookSignature needs a non-empty secret');
  const headers = [options.header, options.previousHeader].filter((h): h is string => typeof h === 'string' && h.length > 0);
  if (headers.length === 0) throw new WebhookSignatureError('missing', 'missing Service-Signature header');

  const body = typeof options.body === 'string' ? encoder.encode(options.body) : options.body;
  const digest = createHash('sha256').update(body).digest('hex');
  const currentDate = options.now === undefined ? undefined : new Date(options.now);
  const clockTolerance = options.clockTolerance ?? 30;

  // Report the failure of the current header first: during a rotation the previous one is extra.
  let firstFailure: WebhookSignatureError | undefined;
  for (const header of headers) {
    const match = BEARER.exec(header);
    if (!match) {
      firstFailure ??= new WebhookSignatureError('malformed', 'Service-Signature must be "Bearer <jwt>"');
      continue;
    }
    for (const secret of secrets) {
      try {
        const { payload } = await jwtVerify(match[1], encoder.encode(secret), {
          algorithms: ['HS256'],
          requiredClaims: ['sha256', 'exp'],
          clockTolerance,
          currentDate,
        });
        if (typeof payload.sha256 !== 'string' || !sameDigest(payload.sha256, digest)) {
          // The secret is right (the JWT verified), so another secret cannot change the outcome.
          firstFailure ??= new WebhookSignatureError('body_mismatch', 'signature does not match the body');
          break;
        }
        return { claims: payload as VerifiedSignature['claims'] };
      } catch (error) {
        const failure = classify(error);
        if (failure === undefined) throw error;
        firstFailure ??= failure;
        // A bad signature may just mean another secret; an expired or malformed token will not improve.
        if (failure.reason !== 'invalid') break;
      }
    }
  }
  throw firstFailure ?? new WebhookSignatureError('invalid', 'invalid signature');
}

function sameDigest(claim: string, digest: string): boolean {
  const a = Buffer.from(claim, 'utf8');
  const b = Buffer.from(digest, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

function classify(error: unknown): WebhookSignatureError | undefined {
  if (error instanceof errors.JWTExpired) return new WebhookSignatureError('expired', 'signature expired');
  if (error instanceof errors.JWSSignatureVerificationFailed) return new WebhookSignatureError('invalid', 'invalid signature');
  if (error instanceof errors.JWTClaimValidationFailed) return new WebhookSignatureError('malformed', `signature rejected: ${error.message}`);
  if (error instanceof errors.JOSEAlgNotAllowed) return new WebhookSignatureError('malformed', 'signature must use HS256');
  if (error instanceof errors.JOSEError) return new WebhookSignatureError('malformed', 'malformed signature token');
  return undefined;
}
