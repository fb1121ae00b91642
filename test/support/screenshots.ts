// Screenshots of pages the browser tests visit, for people to look at (the console's docs, a review of
// a page's look in both colour schemes): written to test-artifacts/ only when ATRIUM_TEST_SCREENSHOTS=1,
// since nothing checks them and each costs the browser a full-page render and a PNG encode.
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Page } from 'playwright-core';

export const screenshotsWanted = process.env.ATRIUM_TEST_SCREENSHOTS === '1';

const ARTIFACTS = resolve(import.meta.dirname, '../../test-artifacts');

/** test-artifacts/<name>.png, of the whole page, when screenshots are wanted. */
export async function screenshot(page: Page, name: string): Promise<void> {
  if (!screenshotsWanted) return;
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}
