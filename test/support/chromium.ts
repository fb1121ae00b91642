// Locates the system Chromium used by the browser tests (Debian package `chromium`).
import { existsSync } from 'node:fs';

export function findChromium(): string | undefined {
  const fromEnv = process.env.ATRIUM_TEST_CHROMIUM;
  if (fromEnv) return existsSync(fromEnv) ? fromEnv : undefined;
  return ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));
}

export const chromiumLaunchArgs: string[] = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];
