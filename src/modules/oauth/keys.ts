// Keys the sign-in pages derive from the service's secret key (ATRIUM_SECRET_KEY, or the key file
// in the data dir), so every instance sharing that key agrees on them and nothing new is stored.
import { hkdfSync } from 'node:crypto';
import type { Config } from '../../config.ts';
import { loadSecretKey } from '../../platform/crypto/secrets.ts';

export interface SigninKeys {
  /** Signs oidc-provider's session and interaction cookies. */
  cookie: string;
  /** HMAC key binding CSRF form tokens to the browser's CSRF cookie. */
  csrf: Buffer;
  /** Pepper for stored one-time codes: six digits alone would fall to an offline search. */
  codes: Buffer;
  /** The key of the development mailbox's link, printed at start-up like the setup link. */
  devMailbox: string;
}

export function deriveSigninKeys(config: Pick<Config, 'secretKey' | 'dataDir'>): SigninKeys {
  const master = loadSecretKey(config.secretKey, config.dataDir);
  const derive = (label: string) => Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), `atrium ${label}`, 32));
  return { cookie: derive('oauth cookies').toString('base64url'), csrf: derive('signin csrf'), codes: derive('signin codes'), devMailbox: derive('development mailbox').toString('base64url') };
}
