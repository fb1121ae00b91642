// Rules of end-user sign-in with email: passwords, sign-up with mandatory confirmation, one-time
// codes, password reset. Nothing here tells a caller whether an address has an account: the
// answers for "no such account" and "wrong secret" are the same, and mail is sent in the
// background so response times do not depend on it either.
import { createHmac, randomBytes, randomInt, randomUUID, timingSafeEqual } from 'node:crypto';
import { hash, verify } from '@node-rs/argon2';
import type { AppContext } from '../../context.ts';
import { hashSecret, secretMatches } from '../../platform/crypto/secrets.ts';
import { createUser, findUserByEmail, findUserById, hashPassword, updateUser, type UserRow } from '../users/service.ts';
import type { Mail } from '../../platform/mail/mailer.ts';
import * as store from './store.ts';

export const CONFIRM_TTL_MS = 24 * 3600_000;
export const RESET_TTL_MS = 3600_000;
export const CODE_TTL_MS = 10 * 60_000;
export const CODE_MAX_ATTEMPTS = 5;
export const PASSWORD_MAX_LENGTH = 1024;
export const EMAIL_MAX_LENGTH = 254;

// Each part of an address: no spaces, no control characters (addresses are looked up in the
// database, which cannot store a NUL), none of the characters that delimit addresses.
const PART = String.raw`[^\s\x00-\x1f\x7f@<>"(),;:\\[\]]+`;
const EMAIL_RE = new RegExp(`^${PART}@${PART}\\.${PART}$`);

export function normaliseEmail(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const email = value.trim();
  return email.length <= EMAIL_MAX_LENGTH && email.isWellFormed() && EMAIL_RE.test(email) ? email : undefined;
}

export interface SigninService {
  /** Checks email and password. 'unconfirmed' only when the password was right. */
  checkPassword(email: string, password: string): Promise<{ result: 'ok'; user: UserRow } | { result: 'unconfirmed'; user: UserRow } | { result: 'invalid' }>;
  /** Starts a sign-up; always answers the same, whether or not the address has an account. */
  signUp(flow: string, appName: string, input: { email: string; password: string; firstName: string; lastName: string }): Promise<void>;
  /** Sends a new confirmation link if the address has an unconfirmed account; silent otherwise. */
  resendConfirmation(flow: string, appName: string, email: string): void;
  /** The unconfirmed account a confirmation link is for, without using the link up. */
  peekConfirmation(flow: string, token: string): Promise<UserRow | undefined>;
  confirm(flow: string, token: string): Promise<UserRow | undefined>;
  requestCode(flow: string, appName: string, email: string): void;
  verifyCode(flow: string, email: string, code: string): Promise<UserRow | undefined>;
  requestReset(flow: string, appName: string, email: string): void;
  peekReset(flow: string, token: string): Promise<UserRow | undefined>;
  resetPassword(flow: string, token: string, password: string): Promise<UserRow | undefined>;
  /** Waits for mail still being sent (shutdown). */
  drain(): Promise<void>;
}

/** `<token id>.<secret>`; only SHA-256 of the secret is stored. */
function newLinkToken(): { id: string; secret: string; value: string } {
  const id = randomUUID();
  const secret = randomBytes(32).toString('base64url');
  return { id, secret, value: `${id}.${secret}` };
}

function parseLinkToken(value: string): { id: string; secret: string } | undefined {
  const match = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.([A-Za-z0-9_-]{43})$/.exec(value);
  return match ? { id: match[1]!, secret: match[2]! } : undefined;
}

export function createSigninService(ctx: AppContext, codeKeys: readonly Buffer[]): SigninService {
  const { db, config } = ctx;
  const pending = new Set<Promise<void>>();
  // Verifying against a real hash when the account does not exist keeps both answers equally slow.
  let dummyHash: Promise<string> | undefined;
  const dummy = () => (dummyHash ??= hash(randomBytes(16).toString('hex')));

  const link = (flow: string, action: 'confirm' | 'reset', token: string) =>
    `${config.publicUrl}/interaction/${encodeURIComponent(flow)}/${action}?token=${encodeURIComponent(token)}`;

  // The first key peppers new codes; a code sent before ATRIUM_SECRET_KEY changed checks under its fallback's.
  const codeHash = (id: string, code: string, key = codeKeys[0]!) => createHmac('sha256', key).update(`${id}:${code}`).digest();

  /** Runs mail work after the response, logging failures; shutdown waits for it. */
  function background(what: string, work: () => Promise<void>): void {
    const task = work().catch((error: unknown) => ctx.log.error({ err: error }, `sign-in mail (${what}) failed`));
    pending.add(task);
    void task.finally(() => pending.delete(task));
  }

  const send = (mail: Mail) => ctx.mail.send(mail);

  async function issueLink(purpose: 'confirm' | 'reset', user: UserRow, flow: string, passwordHash: string | null, ttlMs: number): Promise<string> {
    const token = newLinkToken();
    if (purpose === 'reset') await store.retireEmailTokens(db, user.id, 'reset');
    await store.insertEmailToken(db, {
      id: token.id, purpose, userId: user.id, secretHash: hashSecret(token.secret), flow,
      passwordHash, expiresAt: new Date(Date.now() + ttlMs),
    });
    return token.value;
  }

  async function sendConfirmation(flow: string, appName: string, user: UserRow, passwordHash: string | null): Promise<void> {
    const token = await issueLink('confirm', user, flow, passwordHash, CONFIRM_TTL_MS);
    await send({
      to: user.email,
      subject: `Confirm your email address for ${appName}`,
      text: `Hello,\n\nSomeone, hopefully you, asked to create an account for ${appName} (through Atrium) with this address.\nConfirm it within 24 hours by opening this link:\n\n${link(flow, 'confirm', token)}\n\nIf it was not you, ignore this email: nothing happens without the confirmation.\n`,
    });
  }

  async function findLink(purpose: 'confirm' | 'reset', flow: string, value: string): Promise<store.EmailTokenRow | undefined> {
    const parsed = parseLinkToken(value);
    if (!parsed) return undefined;
    const row = await store.findEmailToken(db, parsed.id, purpose);
    if (!row || row.flow !== flow || !secretMatches(parsed.secret, row.secretHash)) return undefined;
    return row;
  }

  return {
    async checkPassword(email, password) {
      // Exactly one argon2 verification whatever the account's state, so timing tells nothing.
      const user = await findUserByEmail(db, email);
      let candidate = user?.passwordHash ?? null;
      if (user && !candidate && !user.emailVerifiedAt) {
        // A sign-up waiting for confirmation keeps its password with the confirmation link.
        const [latest] = await store.pendingConfirmations(db, user.id);
        candidate = latest?.passwordHash ?? null;
      }
      const matches = await verify(candidate ?? (await dummy()), password).catch(() => false);
      if (!user || !candidate || !matches) return { result: 'invalid' };
      return { result: user.emailVerifiedAt ? 'ok' : 'unconfirmed', user };
    },

    async signUp(flow, appName, input) {
      // Hashing first, whatever happens next, keeps "new" and "taken" addresses equally slow.
      const passwordHash = await hashPassword(input.password);
      background('sign-up', async () => {
        const existing = await findUserByEmail(db, input.email);
        if (existing?.emailVerifiedAt) {
          await send({
            to: existing.email,
            subject: `You already have an account for ${appName}`,
            text: `Hello,\n\nSomeone, hopefully you, tried to create an account for ${appName} (through Atrium) with this address, but you already have one.\nSign in with your password, or with a code sent by email. If you forgot your password, use "Forgot password?" on the sign-in page.\n\nIf it was not you, ignore this email.\n`,
          });
          return;
        }
        let user = existing;
        if (!user) {
          try {
            user = await createUser(db, { email: input.email, firstName: input.firstName, lastName: input.lastName, emailVerified: false });
          } catch {
            // A concurrent sign-up created it first.
            user = await findUserByEmail(db, input.email);
            if (!user) throw new Error('sign-up: user neither created nor found');
          }
        }
        // The password is applied only when this link is confirmed, so a sign-up made by someone
        // else with your address cannot set the password of the account you confirm.
        await sendConfirmation(flow, appName, user, passwordHash);
      });
    },

    resendConfirmation(flow, appName, email) {
      background('confirmation', async () => {
        const user = await findUserByEmail(db, email);
        if (!user || user.emailVerifiedAt) return;
        // The new link carries the password of the latest sign-up, like the one it replaces.
        const [latest] = await store.pendingConfirmations(db, user.id);
        await sendConfirmation(flow, appName, user, latest?.passwordHash ?? null);
      });
    },

    async peekConfirmation(flow, token) {
      const row = await findLink('confirm', flow, token);
      return row ? findUserById(db, row.userId) : undefined;
    },

    async confirm(flow, token) {
      const row = await findLink('confirm', flow, token);
      if (!row || !(await store.useEmailToken(db, row.id))) return undefined;
      const user = await findUserById(db, row.userId);
      if (!user) return undefined;
      await store.retireEmailTokens(db, user.id, 'confirm');
      return updateUser(db, user.id, {
        emailVerifiedAt: user.emailVerifiedAt ?? new Date(),
        ...(row.passwordHash ? { passwordHash: row.passwordHash } : {}),
      });
    },

    requestCode(flow, appName, email) {
      background('code', async () => {
        const user = await findUserByEmail(db, email);
        if (!user) return;
        await store.retireEmailTokens(db, user.id, 'code');
        const id = randomUUID();
        const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
        await store.insertEmailToken(db, { id, purpose: 'code', userId: user.id, secretHash: codeHash(id, code), flow, expiresAt: new Date(Date.now() + CODE_TTL_MS) });
        await send({
          to: user.email,
          subject: `Your sign-in code for ${appName}`,
          text: `Hello,\n\nYour code to sign in to ${appName} (through Atrium) is:\n\n    ${code}\n\nIt is valid for 10 minutes and works once. If you did not ask for it, ignore this email.\n`,
        });
      });
    },

    async verifyCode(flow, email, code) {
      const user = await findUserByEmail(db, email);
      const row = user ? await store.findLatestCode(db, user.id, flow) : undefined;
      if (!user || !row) return undefined;
      const expected = row.secretHash;
      const matches = codeKeys.some((key) => {
        const given = codeHash(row.id, code, key);
        return expected.length === given.length && timingSafeEqual(expected, given);
      });
      if (!matches) {
        await store.countFailedAttempt(db, row.id, CODE_MAX_ATTEMPTS);
        return undefined;
      }
      if (!(await store.useEmailToken(db, row.id))) return undefined;
      // The code reached the mailbox, which is what confirming an address proves.
      return user.emailVerifiedAt ? user : updateUser(db, user.id, { emailVerifiedAt: new Date() });
    },

    requestReset(flow, appName, email) {
      background('reset', async () => {
        const user = await findUserByEmail(db, email);
        if (!user) return;
        const token = await issueLink('reset', user, flow, null, RESET_TTL_MS);
        await send({
          to: user.email,
          subject: `Reset your password for ${appName}`,
          text: `Hello,\n\nSomeone, hopefully you, asked to reset the password of your account for ${appName} (through Atrium).\nChoose a new password within an hour by opening this link:\n\n${link(flow, 'reset', token)}\n\nIf it was not you, ignore this email: your password stays as it is.\n`,
        });
      });
    },

    async peekReset(flow, token) {
      const row = await findLink('reset', flow, token);
      return row ? findUserById(db, row.userId) : undefined;
    },

    async resetPassword(flow, token, password) {
      const passwordHash = await hashPassword(password);
      const row = await findLink('reset', flow, token);
      if (!row || !(await store.useEmailToken(db, row.id))) return undefined;
      const user = await findUserById(db, row.userId);
      if (!user) return undefined;
      // A new password ends every session and grant: whoever knew the old one is signed out.
      await store.revokeAccount(db, user.id);
      return updateUser(db, user.id, { passwordHash, emailVerifiedAt: user.emailVerifiedAt ?? new Date() });
    },

    async drain() {
      await Promise.allSettled([...pending]);
    },
  };
}
