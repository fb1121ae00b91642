// What the rest of Atrium (the CLI's start-up banner) may ask of the authorization server.
import type { Config } from '../../config.ts';
import { deriveSigninKeys } from './keys.ts';

export const DEV_MAIL_PATH = '/dev/mail';

/** The link that opens the development mailbox, key included. */
export function devMailboxLink(config: Pick<Config, 'secretKey' | 'secretKeyFallbacks' | 'dataDir' | 'publicUrl'>): string {
  return `${config.publicUrl}${DEV_MAIL_PATH}?key=${deriveSigninKeys(config).devMailbox}`;
}
