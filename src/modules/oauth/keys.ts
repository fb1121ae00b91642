// Keys the sign-in pages derive from the service's secret key (ATRIUM_SECRET_KEY, or the key file
// in the data dir), so every instance sharing that key agrees on them and nothing new is stored.
import { hkdfSync } from 'node:crypto';
import type { Config } from '../../config.ts';
import { loadSecretKeys } from '../../platform/crypto/secrets.ts';

// While ATRIUM_SECRET_KEY is being changed, the keys derived from its fallbacks follow the current
// key's in each list: the first signs, every one verifies, so nobody's sign-in breaks at the switch.
export interface SigninKeys {
  /** Sign oidc-provider's session and interaction cookies. */
  cookie: string[];
  /** HMAC keys binding CSRF form tokens to the browser's CSRF cookie. */
  csrf: Buffer[];
  /** Peppers of stored one-time codes: six digits alone would fall to an offline search. */
  codes: Buffer[];
  /** The key of the development mailbox's link, printed at start-up like the setup link. */
  devMailbox: string;
}

export function deriveSigninKeys(config: Pick<Config, 'secretKey' | 'secretKeyFallbacks' | 'dataDir'>): SigninKeys {
  const { current, fallbacks } = loadSecretKeys(config);
  const derive = (master: Buffer, label: string) => Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), `atrium ${label}`, 32));
  const each = (label: string) => [current, ...fallbacks].map((master) => derive(master, label));
  return {
    cookie: each('oauth cookies').map((key) => key.toString('base64url')),
    csrf: each('signin csrf'),
    codes: each('signin codes'),
    devMailbox: derive(current, 'development mailbox').toString('base64url'),
  };
}
