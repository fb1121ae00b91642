// Locates the system Chromium used by the browser tests (Debian package `chromium`), and proves it
// works by running it: a binary that exists but cannot start (missing libraries, no sandbox
// permission, a broken profile dir) must count as missing, not surface as failures in the suites.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

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

// The marker exists only in the rendered DOM, once the page's script has run, not in its source.
const PROBE_PAGE = `data:text/html,<script>document.write('atrium-probe-' + (6 * 7))</script>`;
const PROBE_MARKER = 'atrium-probe-42';

/**
 * Starts Chromium headless on a fresh profile, renders a page whose script writes a marker, and
 * reads the DOM it prints. Resolves to why that failed, or undefined when the page rendered.
 */
export async function probeChromium(executable: string, timeoutMs = 30_000): Promise<string | undefined> {
  const profile = mkdtempSync(join(tmpdir(), 'atrium-chromium-'));
  try {
    const child = spawn(executable, [...chromiumLaunchArgs, `--user-data-dir=${profile}`, '--dump-dom', PROBE_PAGE], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString('utf8'); });
    child.stderr.on('data', (chunk: Buffer) => { stderr = (stderr + chunk.toString('utf8')).slice(-4000); });
    const ended = await new Promise<string>((resolve) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        resolve(`it did not render a page within ${timeoutMs} ms`);
      }, timeoutMs);
      child.once('error', (error) => {
        clearTimeout(timer);
        resolve(`it could not be started: ${error.message}`);
      });
      child.once('close', (code, signal) => {
        clearTimeout(timer);
        resolve(signal ? `it was ended by ${signal}` : `it exited with ${code}`);
      });
    });
    if (stdout.includes(PROBE_MARKER)) return undefined;
    const lastError = stderr.trim().split('\n').filter((line) => line.trim()).at(-1);
    return `${ended} without rendering the probe page${lastError ? ` (${lastError.trim().slice(0, 300)})` : ''}`;
  } finally {
    rmSync(profile, { recursive: true, force: true });
  }
}

/** Waits until what a page shows meets `check`, polling; the error names what was awaited. */
export async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
