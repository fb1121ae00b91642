// CSRF protection of the sign-in forms: a random value in an HttpOnly SameSite=Lax cookie, and in
// each form an HMAC of it (signed double submit). A cross-site page can make the browser send the
// cookie only on top-level GETs (Lax), and cannot read it to compute the form token. Requests that
// announce a cross-site origin are refused before the token is even looked at.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type {} from '@fastify/cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';

export class Csrf {
  /** The first signs; each verifies (the others are derived from ATRIUM_SECRET_KEY_FALLBACKS). */
  readonly #keys: readonly Buffer[];
  readonly #cookieName: string;
  readonly #secure: boolean;
  readonly #origin: string;

  constructor(keys: readonly Buffer[], publicUrl: string) {
    this.#keys = keys;
    this.#secure = publicUrl.startsWith('https:');
    // __Host- pins the cookie to this exact origin (no Domain, path /), and needs Secure.
    this.#cookieName = this.#secure ? '__Host-atrium_csrf' : 'atrium_csrf';
    this.#origin = new URL(publicUrl).origin;
  }

  /** The form token for this browser, setting its CSRF cookie when it has none. */
  token(request: FastifyRequest, reply: FastifyReply): string {
    let secret = request.cookies[this.#cookieName];
    if (!secret || !/^[A-Za-z0-9_-]{43}$/.test(secret)) {
      secret = randomBytes(32).toString('base64url');
      reply.setCookie(this.#cookieName, secret, { path: '/', httpOnly: true, sameSite: 'lax', secure: this.#secure });
    }
    return this.#sign(this.#keys[0]!, secret);
  }

  /** True when a state-changing request comes from our own form in this browser. */
  verify(request: FastifyRequest, formToken: unknown): boolean {
    const site = request.headers['sec-fetch-site'];
    if (site === 'cross-site') return false;
    const origin = request.headers.origin;
    if (origin !== undefined && origin !== 'null' && origin !== this.#origin) return false;
    const secret = request.cookies[this.#cookieName];
    if (!secret || typeof formToken !== 'string') return false;
    const given = Buffer.from(formToken);
    return this.#keys.some((key) => {
      const expected = Buffer.from(this.#sign(key, secret));
      return expected.length === given.length && timingSafeEqual(expected, given);
    });
  }

  #sign(key: Buffer, secret: string): string {
    return createHmac('sha256', key).update(secret).digest('base64url');
  }
}
