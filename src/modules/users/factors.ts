// Rules of second factors: an authenticator app (TOTP, RFC 6238, through `otpauth`), passkeys
// (WebAuthn, through `@simplewebauthn/server`) and recovery codes. The account routes enrol and
// remove them, the sign-in pages (src/oauth) verify them.
//
// - A TOTP code is accepted once: the time step of the last accepted code is stored and a code must
//   be of a later step (one conditional UPDATE, so two instances cannot both accept it).
// - Wrong codes count against the account in the database (platform/limits), shared by every
//   instance: FACTOR_MAX_FAILURES per FACTOR_WINDOW_MS, then every code is refused until the window ends.
// - Passkeys belong to the relying party of ATRIUM_PUBLIC_URL: its host is the RP ID and its origin
//   the only origin accepted. Signature counters must move forward (usePasskey).
// - Recovery codes are random (50 bits each), stored as SHA-256, each usable once.
// - Adding, removing or renewing a factor needs a sign-in of the last FRESH_SIGNIN_SECONDS, mails the
//   account's owner once it has committed, and leaves an entry in the deployment's audit log (the
//   account routes declare it; the operator's reset writes its own).
import { randomInt, randomUUID } from 'node:crypto';
import {
  generateAuthenticationOptions, generateRegistrationOptions, verifyAuthenticationResponse, verifyRegistrationResponse,
  type AuthenticationResponseJSON, type AuthenticatorTransport, type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON, type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import * as OTPAuth from 'otpauth';
import type { AppContext } from '../../context.ts';
import type { AuditActor } from '../../platform/audit/log.ts';
import { hashSecret } from '../../platform/crypto/secrets.ts';
import type { Principal } from '../../platform/http/auth.ts';
import { apiError, conflict, notFound, tooManyRequests } from '../../platform/http/errors.ts';
import type { Db } from '../../platform/db/engine.ts';
import { afterRequestTransaction, onceCommitted } from '../../platform/db/scope.ts';
import { RateCounters } from '../../platform/limits/counters.ts';
import * as store from './factors-store.ts';
import { findUserByEmail, findUserById, type UserRow } from './store.ts';

const TOTP = { algorithm: 'SHA1', digits: 6, period: 30 } as const;
/** Codes of the step before and after the current one are accepted too (clock drift). */
const TOTP_WINDOW = 1;
export const RECOVERY_CODE_COUNT = 10;
export const FACTOR_MAX_FAILURES = 5;
export const FACTOR_WINDOW_MS = 15 * 60_000;
export const FRESH_SIGNIN_SECONDS = 10 * 60;
const CHALLENGE_TTL_MS = 5 * 60_000;
const PASSKEY_NAME_MAX = 100;
const BASE64URL = /^[A-Za-z0-9_-]{1,1400}$/;

// Crockford's base32 without the letters that look like digits: 10 characters are 50 bits.
const RECOVERY_ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

/** How a passkey proves possession (RFC 8176): a key bound to one device, or a synced one. */
export type KeyAmr = 'hwk' | 'swk';

export interface PasskeyView {
  id: string;
  name: string;
  /** Synced between devices by its provider (a "multi-device" credential). */
  synced: boolean;
  created_at: string;
  last_used_at: string | null;
}

export interface FactorsView {
  second_factor: boolean;
  totp: { enabled_at: string } | null;
  passkeys: PasskeyView[];
  recovery_codes: { remaining: number; total: number; created_at: string } | null;
}

export interface LockState {
  allowed: boolean;
  /** Seconds until wrong codes may be tried again (0 when allowed). */
  retryAfter: number;
}

/** Whether the user has a second factor: a confirmed authenticator app or a passkey. */
export async function hasSecondFactor(db: Db, userId: string): Promise<boolean> {
  const [totp, passkeys] = await Promise.all([store.findTotp(db, userId), store.listPasskeys(db, userId)]);
  return Boolean(totp?.secret) || passkeys.length > 0;
}

const passkeyView = (p: store.PasskeyRow): PasskeyView => ({
  id: p.id, name: p.name, synced: p.deviceType === 'multiDevice', created_at: p.createdAt.toISOString(), last_used_at: p.lastUsedAt?.toISOString() ?? null,
});

/** The WebAuthn user handle of an account: its id's 16 bytes. */
const userHandle = (userId: string) => Buffer.from(userId.replaceAll('-', ''), 'hex');

function newRecoveryCode(): string {
  let code = '';
  for (let i = 0; i < 10; i++) code += RECOVERY_ALPHABET[randomInt(RECOVERY_ALPHABET.length)];
  return `${code.slice(0, 5)}-${code.slice(5)}`;
}

/** A recovery code as typed (any case, spaces or dashes, I/L for 1, O for 0) in its stored form. */
function normaliseRecoveryCode(input: string): string | undefined {
  const code = input.toLowerCase().replace(/[\s-]/g, '').replace(/[il]/g, '1').replace(/o/g, '0');
  return code.length === 10 && [...code].every((c) => RECOVERY_ALPHABET.includes(c)) ? code : undefined;
}

export type SecondFactors = ReturnType<typeof createSecondFactors>;

/** The second-factor rules of one service; `now` (epoch ms) is the clock codes are checked against. */
export function createSecondFactors(ctx: AppContext, now: () => number = Date.now) {
  const { db, config } = ctx;
  const publicUrl = new URL(config.publicUrl);
  const rpID = publicUrl.hostname;
  const origin = publicUrl.origin;
  const issuer = `Atrium (${publicUrl.host})`;
  const counters = new RateCounters(db, now);
  const failureKey = (userId: string) => `factor:${userId}`;

  function totpOf(user: UserRow, base32: string) {
    return new OTPAuth.TOTP({ ...TOTP, issuer, label: user.email, secret: OTPAuth.Secret.fromBase32(base32) });
  }

  /** The time step the code belongs to, if it is a code of the secret near now. */
  function stepOf(base32: string, code: string): number | undefined {
    if (!/^[0-9]{6}$/.test(code)) return undefined;
    const timestamp = now();
    const delta = OTPAuth.TOTP.validate({ ...TOTP, token: code, secret: OTPAuth.Secret.fromBase32(base32), timestamp, window: TOTP_WINDOW });
    return delta === null ? undefined : OTPAuth.TOTP.counter({ period: TOTP.period, timestamp }) + delta;
  }

  /** The signed-in user of a principal whose sign-in is recent enough to change factors. */
  async function freshUser(principal: Principal): Promise<UserRow> {
    if (!principal.userId) throw notFound('User (an API key acts for a project, not a user)');
    if (principal.authTime === undefined || now() / 1000 - principal.authTime > FRESH_SIGNIN_SECONDS) {
      throw apiError('reauthentication_required', `Sign in again to change your second factors: this needs a sign-in of the last ${FRESH_SIGNIN_SECONDS / 60} minutes through the sign-in page`);
    }
    const user = await findUserById(db, principal.userId);
    if (!user) throw notFound('User');
    return user;
  }

  async function lockState(userId: string): Promise<LockState> {
    const [window] = await counters.peek([failureKey(userId)]);
    if (window!.count < FACTOR_MAX_FAILURES) return { allowed: true, retryAfter: 0 };
    return { allowed: false, retryAfter: Math.max(1, Math.ceil((window!.resetAt - now()) / 1000)) };
  }

  /** Counts a wrong code; in a request's transaction, once it has ended, as the refusal rolls it back. */
  function countFailure(userId: string): Promise<void> {
    return afterRequestTransaction(() => counters.hit([failureKey(userId)], FACTOR_WINDOW_MS));
  }

  async function requireUnlocked(userId: string): Promise<void> {
    const state = await lockState(userId);
    if (!state.allowed) throw tooManyRequests(state.retryAfter);
  }

  /**
   * Tells the account's owner, once the change has committed (a request does not wait for it); a
   * failure to send is logged, not the caller's.
   */
  function notify(user: UserRow, what: string): Promise<void> {
    const at = new Date(now()).toISOString().replace('T', ' ').slice(0, 16);
    return onceCommitted(() => ctx.mail.send({
      to: user.email,
      subject: 'The second factors of your Atrium account changed',
      text: `Hello,\n\n${what} (${at} UTC).\n\nIf this was you, there is nothing to do. If it was not, reset your password at once and review the second factors on your account page:\n\n${config.publicUrl}/console/profile\n`,
    }).catch((error: unknown) => ctx.log.error({ err: error }, 'second-factor notification mail failed')));
  }

  /** New recovery codes (their values, shown once), replacing any the user had. */
  async function renewRecoveryCodes(tx: Db, userId: string): Promise<string[]> {
    const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
    await store.replaceRecoveryCodes(tx, userId, codes.map((code) => ({ id: randomUUID(), codeHash: hashSecret(normaliseRecoveryCode(code)!) })));
    return codes;
  }

  /** After a factor was added: the first one brings recovery codes (shown once); later ones none. */
  async function recoveryCodesForFirstFactor(tx: Db, userId: string): Promise<string[] | undefined> {
    const { total } = await store.recoveryCodeCounts(tx, userId);
    return total === 0 ? renewRecoveryCodes(tx, userId) : undefined;
  }

  /** After a factor was removed: without any second factor, recovery codes have nothing to recover. */
  async function dropRecoveryCodesIfLast(tx: Db, userId: string): Promise<void> {
    if (!(await hasSecondFactor(tx, userId))) await store.deleteRecoveryCodes(tx, userId);
  }

  return {
    hasSecondFactor: (userId: string) => hasSecondFactor(db, userId),

    /** Which factors the sign-in page can offer the user. */
    async methods(userId: string): Promise<{ totp: boolean; passkeys: boolean; recoveryCodes: boolean }> {
      const [totp, passkeys, codes] = await Promise.all([store.findTotp(db, userId), store.listPasskeys(db, userId), store.recoveryCodeCounts(db, userId)]);
      return { totp: Boolean(totp?.secret), passkeys: passkeys.length > 0, recoveryCodes: codes.unused > 0 };
    },

    async view(userId: string): Promise<FactorsView> {
      const [totp, passkeys, codes] = await Promise.all([store.findTotp(db, userId), store.listPasskeys(db, userId), store.recoveryCodeCounts(db, userId)]);
      return {
        second_factor: Boolean(totp?.secret) || passkeys.length > 0,
        totp: totp?.secret && totp.enabledAt ? { enabled_at: totp.enabledAt.toISOString() } : null,
        passkeys: passkeys.map(passkeyView),
        recovery_codes: codes.total > 0 && codes.createdAt ? { remaining: codes.unused, total: codes.total, created_at: codes.createdAt.toISOString() } : null,
      };
    },

    // --- enrolment and removal (account routes) ---------------------------------------------

    /** A new secret for an authenticator app; it replaces the current one once confirmed with a code. */
    async startTotp(principal: Principal): Promise<{ secret: string; otpauth_uri: string }> {
      const user = await freshUser(principal);
      const secret = new OTPAuth.Secret({ size: 20 });
      await store.setPendingTotp(db, user.id, ctx.secrets.encrypt(secret.base32));
      return { secret: secret.base32, otpauth_uri: totpOf(user, secret.base32).toString() };
    },

    async confirmTotp(principal: Principal, code: string): Promise<{ recovery_codes: string[] | null }> {
      const user = await freshUser(principal);
      await requireUnlocked(user.id);
      const row = await store.findTotp(db, user.id);
      if (!row?.pendingSecret) throw conflict('No authenticator app is waiting for confirmation: start again');
      const step = stepOf(ctx.secrets.decrypt(row.pendingSecret), code.replace(/\s+/g, ''));
      if (step === undefined) {
        await countFailure(user.id);
        throw apiError('invalid_code', 'That code is not valid: enter the code your authenticator app shows now');
      }
      const replaced = Boolean(row.secret);
      const codes = await db.transaction(async (tx) => {
        if (!(await store.confirmTotp(tx, user.id, row.pendingSecret!, step))) throw conflict('The enrolment changed meanwhile: start again');
        return recoveryCodesForFirstFactor(tx, user.id);
      });
      void notify(user, replaced ? 'The authenticator app of your account was replaced' : 'An authenticator app was added to your account as a second factor');
      return { recovery_codes: codes ?? null };
    },

    async removeTotp(principal: Principal): Promise<void> {
      const user = await freshUser(principal);
      await db.transaction(async (tx) => {
        if (!(await store.deleteTotp(tx, user.id))) throw notFound('Authenticator app');
        await dropRecoveryCodesIfLast(tx, user.id);
      });
      void notify(user, 'The authenticator app was removed from your account');
    },

    async passkeyRegistrationOptions(principal: Principal): Promise<PublicKeyCredentialCreationOptionsJSON> {
      const user = await freshUser(principal);
      const existing = await store.listPasskeys(db, user.id);
      const options = await generateRegistrationOptions({
        rpName: 'Atrium',
        rpID,
        userName: user.email,
        userDisplayName: `${user.firstName} ${user.lastName}`.trim() || user.email,
        userID: userHandle(user.id),
        attestationType: 'none',
        excludeCredentials: existing.map((p) => ({ id: p.credentialId, transports: p.transports as AuthenticatorTransport[] })),
        // Discoverable, so that it can sign in without an address typed first.
        authenticatorSelection: { residentKey: 'required', userVerification: 'preferred' },
        timeout: CHALLENGE_TTL_MS,
      });
      await store.insertChallenge(db, { id: randomUUID(), purpose: 'register', challenge: options.challenge, userId: user.id, expiresAt: new Date(now() + CHALLENGE_TTL_MS) });
      return options;
    },

    async registerPasskey(principal: Principal, name: string, response: RegistrationResponseJSON): Promise<{ passkey: PasskeyView; recovery_codes: string[] | null }> {
      const user = await freshUser(principal);
      let verification;
      try {
        verification = await verifyRegistrationResponse({
          response,
          expectedChallenge: (challenge) => store.takeChallenge(db, 'register', challenge, { userId: user.id }),
          expectedOrigin: origin,
          expectedRPID: rpID,
          requireUserVerification: false,
        });
      } catch (error) {
        throw apiError('invalid_code', `The passkey was not registered: ${(error as Error).message}`);
      }
      if (!verification.verified) throw apiError('invalid_code', 'The passkey was not registered: its answer did not verify');
      const { credential, credentialDeviceType, credentialBackedUp } = verification.registrationInfo;
      if (await store.findPasskeyByCredential(db, credential.id)) throw conflict('This passkey is registered already');
      const { passkey, codes } = await db.transaction(async (tx) => {
        const row = await store.insertPasskey(tx, {
          id: randomUUID(), userId: user.id, credentialId: credential.id, publicKey: Buffer.from(credential.publicKey),
          signCount: credential.counter, transports: credential.transports ?? [], deviceType: credentialDeviceType,
          backedUp: credentialBackedUp, name: name.trim().slice(0, PASSKEY_NAME_MAX) || 'Passkey',
        });
        return { passkey: row, codes: await recoveryCodesForFirstFactor(tx, user.id) };
      });
      void notify(user, `A passkey ("${passkey.name}") was added to your account`);
      return { passkey: passkeyView(passkey), recovery_codes: codes ?? null };
    },

    async renamePasskey(principal: Principal, id: string, name: string): Promise<PasskeyView> {
      if (!principal.userId) throw notFound('Passkey');
      const row = await store.renamePasskey(db, principal.userId, id, name.trim().slice(0, PASSKEY_NAME_MAX) || 'Passkey');
      if (!row) throw notFound('Passkey');
      return passkeyView(row);
    },

    async removePasskey(principal: Principal, id: string): Promise<void> {
      const user = await freshUser(principal);
      const removed = await db.transaction(async (tx) => {
        const row = await store.deletePasskey(tx, user.id, id);
        if (!row) throw notFound('Passkey');
        await dropRecoveryCodesIfLast(tx, user.id);
        return row;
      });
      void notify(user, `The passkey "${removed.name}" was removed from your account`);
    },

    async regenerateRecoveryCodes(principal: Principal): Promise<string[]> {
      const user = await freshUser(principal);
      const codes = await db.transaction(async (tx) => {
        if (!(await hasSecondFactor(tx, user.id))) throw conflict('Recovery codes come with a second factor: add an authenticator app or a passkey first');
        return renewRecoveryCodes(tx, user.id);
      });
      void notify(user, 'New recovery codes were made for your account; the old ones no longer work');
      return codes;
    },

    /**
     * The operator's recovery for an account that lost every second factor: removes them all, with
     * the deployment's audit entry naming `by`, and mails the owner. Undefined when no account has
     * the address.
     */
    async resetAll(email: string, by: AuditActor): Promise<{ user_id: string; removed: { totp: boolean; passkeys: number; recovery_codes: number } } | undefined> {
      const user = await findUserByEmail(db, email);
      if (!user) return undefined;
      const removed = await db.transaction(async (tx) => {
        const gone = await store.deleteAllFactors(tx, user.id);
        await ctx.audit.write(tx, { projectId: null, actor: by, action: 'second_factor.reset', target: { type: 'account', id: user.id }, outcome: 'succeeded' });
        return gone;
      });
      await notify(user, 'Every second factor of your account was removed by the operator of this Atrium server; sign in with your password and add new ones');
      return { user_id: user.id, removed: { totp: removed.totp, passkeys: removed.passkeys, recovery_codes: removed.recoveryCodes } };
    },

    // --- verification (sign-in pages) ----------------------------------------------------------

    lockState,

    /** Checks a code of the user's authenticator app, once; a wrong or replayed code counts as a failure. */
    async verifyTotp(userId: string, code: string): Promise<boolean> {
      const row = await store.findTotp(db, userId);
      const step = row?.secret ? stepOf(ctx.secrets.decrypt(row.secret), code.replace(/\s+/g, '')) : undefined;
      if (step === undefined || !(await store.useTotpStep(db, userId, step))) {
        await countFailure(userId);
        return false;
      }
      return true;
    },

    /** Uses one of the user's recovery codes up; a wrong one counts as a failure. Mails the owner. */
    async useRecoveryCode(userId: string, input: string): Promise<boolean> {
      const code = normaliseRecoveryCode(input);
      if (!code || !(await store.useRecoveryCode(db, userId, hashSecret(code)))) {
        await countFailure(userId);
        return false;
      }
      const user = await findUserById(db, userId);
      const { unused } = await store.recoveryCodeCounts(db, userId);
      if (user) void notify(user, `A recovery code was used to sign in to your account; ${unused} of them remain${unused <= 2 ? ' (make new ones on your account page)' : ''}`);
      return true;
    },

    /**
     * Options for signing in with a passkey in a sign-in flow: any discoverable passkey with user
     * verification (passwordless), or one of the user's passkeys as the second factor.
     */
    async authenticationOptions(flow: string, userId?: string): Promise<PublicKeyCredentialRequestOptionsJSON> {
      const passkeys = userId ? await store.listPasskeys(db, userId) : [];
      const options = await generateAuthenticationOptions({
        rpID,
        allowCredentials: passkeys.map((p) => ({ id: p.credentialId, transports: p.transports as AuthenticatorTransport[] })),
        userVerification: userId ? 'preferred' : 'required',
        timeout: CHALLENGE_TTL_MS,
      });
      await store.insertChallenge(db, { id: randomUUID(), purpose: 'authenticate', challenge: options.challenge, flow, userId: userId ?? null, expiresAt: new Date(now() + CHALLENGE_TTL_MS) });
      return options;
    },

    /**
     * Verifies a passkey's answer to this flow's challenge: its origin and RP ID, its signature, its
     * counter, and user verification when it signs in alone. The account and how the key proved
     * possession, or undefined.
     */
    async verifyPasskey(flow: string, response: AuthenticationResponseJSON, userId?: string): Promise<{ userId: string; amr: KeyAmr } | undefined> {
      // The answer comes from a form: anything but base64url names no passkey (and never reaches a query).
      const passkey = typeof response.id === 'string' && BASE64URL.test(response.id) ? await store.findPasskeyByCredential(db, response.id) : undefined;
      if (!passkey || (userId !== undefined && passkey.userId !== userId)) return undefined;
      // Signing in alone, the authenticator names the account too: it must be the passkey's.
      const handle: unknown = response.response?.userHandle;
      if (userId === undefined && handle !== undefined && (typeof handle !== 'string' || !userHandle(passkey.userId).equals(Buffer.from(handle, 'base64url')))) return undefined;
      let verification;
      try {
        verification = await verifyAuthenticationResponse({
          response,
          expectedChallenge: (challenge) => store.takeChallenge(db, 'authenticate', challenge, { flow }),
          expectedOrigin: origin,
          expectedRPID: rpID,
          credential: { id: passkey.credentialId, publicKey: new Uint8Array(passkey.publicKey), counter: passkey.signCount, transports: passkey.transports as AuthenticatorTransport[] },
          requireUserVerification: userId === undefined,
        });
      } catch (error) {
        ctx.log.info({ err: error, passkey: passkey.id }, 'passkey answer refused');
        return undefined;
      }
      if (!verification.verified || !(await store.usePasskey(db, passkey.id, passkey.signCount, verification.authenticationInfo.newCounter))) return undefined;
      return { userId: passkey.userId, amr: passkey.deviceType === 'singleDevice' ? 'hwk' : 'swk' };
    },

  };
}
