// Helpers for the second-factor suites: TOTP codes computed here from RFC 6238 with node:crypto
// (independently of the server's library), and a sign-in through the pages that gets a fresh token of
// Atrium's own CLI client (the credential that may change second factors), giving the second factor
// when the page asks for it.
import { createHmac } from 'node:crypto';
import * as oidc from 'openid-client';
import { ATRIUM_CLI_CLIENT_ID, ATRIUM_CLI_SCOPE } from '../../src/modules/oauth/first-party.ts';
import { authorizationRequest, discover, FormBrowser, pageError, type Page } from './oauth.ts';

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

function base32Decode(text: string): Buffer {
  let bits = '';
  for (const char of text.replace(/=+$/, '').toUpperCase()) {
    const value = BASE32.indexOf(char);
    if (value < 0) throw new Error(`not base32: ${char}`);
    bits += value.toString(2).padStart(5, '0');
  }
  const bytes = [];
  for (let i = 0; i + 8 <= bits.length; i += 8) bytes.push(parseInt(bits.slice(i, i + 8), 2));
  return Buffer.from(bytes);
}

/** The 6-digit TOTP code (SHA-1, 30 s steps) of a base32 secret at `atMs` (RFC 6238, RFC 4226 §5.3). */
export function totpCode(secretBase32: string, atMs = Date.now()): string {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(atMs / 1000 / 30)));
  const mac = createHmac('sha1', base32Decode(secretBase32)).update(counter).digest();
  const offset = mac[mac.length - 1]! & 0x0f;
  const binary = (mac.readUInt32BE(offset) & 0x7fffffff) % 1_000_000;
  return String(binary).padStart(6, '0');
}

export type SecondFactor = { totp: string } | { recovery: string };

const CLI_REDIRECT = 'http://127.0.0.1:45678/callback';

/**
 * Signs in through the pages as Atrium's CLI (a first-party client acting as the user) and returns
 * its fresh access token: password first, then the second factor if the page asks for one.
 */
export async function freshUserToken(service: { url: string }, email: string, password: string, factor?: SecondFactor): Promise<string> {
  const config = await discover(service, { clientId: ATRIUM_CLI_CLIENT_ID, clientSecret: '' });
  const request = await authorizationRequest(config, CLI_REDIRECT, ATRIUM_CLI_SCOPE);
  const browser = new FormBrowser(service.url);
  const login = await browser.go('GET', request.url, undefined, CLI_REDIRECT);
  let page: Page & { redirectedTo?: string } = await browser.submit(login, '/password', { email, password }, CLI_REDIRECT);
  if (page.html.includes('id="totp-form"') || page.html.includes('Use a recovery code')) {
    if (!factor) throw new Error('the sign-in asks for a second factor, and the test gave none');
    if ('totp' in factor) page = await browser.submit(page, '/factor/totp', { code: factor.totp }, CLI_REDIRECT);
    else page = await browser.submit(await browser.go('GET', new URL('factor/recovery', `${page.url.replace(/\/factor.*$/, '')}/`)), '/factor/recovery', { code: factor.recovery }, CLI_REDIRECT);
  }
  if (!page.redirectedTo && page.html.includes('/consent"')) page = await browser.submit(page, '/consent', { decision: 'allow' }, CLI_REDIRECT);
  if (!page.redirectedTo) throw new Error(`the sign-in did not finish: ${page.status} ${pageError(page.html) ?? page.html.slice(0, 400)}`);
  const tokens = await oidc.authorizationCodeGrant(config, new URL(page.redirectedTo), { pkceCodeVerifier: request.verifier, expectedState: request.state, expectedNonce: request.nonce });
  return tokens.access_token;
}
