// The README's quick start as a newcomer follows it: the commands are read from the fenced code
// blocks of its Set-up section and run as they are copied, in a fresh copy of the repository (a
// directory of links to this one, without ./data) from a user's shell (none of the test runner's
// variables). Then the next steps: signing in with the CLI's device flow, the link it prints opened
// in Chromium, and a test webhook received by `atrium webhooks listen`.
//
// What the shell changes, through documented settings only: `PORT` moves the server off 8000 (tests
// run side by side), and `ATRIUM_URL` points the CLI at it; the one URL in a command (curl's) is the
// README's address, which the test replaces with the one the server prints, as the README's "One
// URL everywhere" tells a reader to. A command of another shape than the ones below fails the test:
// update the test with the README.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, test } from 'node:test';
import { chromium, type Browser } from 'playwright-core';
import { chromiumLaunchArgs } from '../support/chromium.ts';
import { chromiumPath, requireOrSkip } from '../support/env.ts';
import { freePort } from '../support/service.ts';
import { codeBlocks, finished, shell, shellWords, stopAll, type ShellRun } from '../support/shell.ts';

const repoRoot = resolve(import.meta.dirname, '../..');
/** The address the README's commands use: its server's, on its default port. */
const README_URL = 'http://localhost:8000';
const START_TIMEOUT_MS = 120_000;

interface Command {
  /** The line as copied (comment included: the shell ignores it). */
  line: string;
  words: string[];
  comment: string | undefined;
}

/** The shell commands of the README's Set-up section, one per line (continuations joined). */
function quickStartCommands(): Command[] {
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
  const section = /^## Set-up\n([\s\S]*?)^## /m.exec(readme)?.[1];
  assert.ok(section, 'README.md has a "## Set-up" section');
  const commands: Command[] = [];
  for (const block of codeBlocks(section).filter((b) => b.lang === 'sh')) {
    const joined = block.lines.join('\n').replace(/\\\n\s*/g, '').split('\n');
    for (const line of joined) {
      const { words, comment } = shellWords(line);
      if (words.length > 0) commands.push({ line, words, comment });
      // A comment line under a command shows its output: kept with the command above.
      else if (comment && commands.length > 0) commands.at(-1)!.comment = comment;
    }
  }
  return commands;
}

/** A copy of the repository as `git clone` + `npm install` leave it: every entry but data and VCS. */
function freshCopy(): string {
  const dir = mkdtempSync(join(tmpdir(), 'atrium-readme-'));
  for (const entry of readdirSync(repoRoot)) {
    if (['data', '.git', 'test-artifacts'].includes(entry)) continue;
    symlinkSync(join(repoRoot, entry), join(dir, entry));
  }
  return dir;
}

/** A user's shell: the system's PATH, an empty home, and nothing of the test runner's. */
function userEnv(home: string, settings: Record<string, string>): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, LANG: 'C.UTF-8', ...settings };
}

const running = new Set<ShellRun>();
const dirs: string[] = [];
let browser: Browser | undefined;
after(async () => {
  stopAll(running);
  await browser?.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

test('the README quick start, then CLI sign-in by device and a test webhook to `atrium webhooks listen`', { timeout: 600_000 }, async (t) => {
  if (!requireOrSkip(t, chromiumPath !== undefined, 'Chromium')) return;
  const cwd = freshCopy();
  const home = mkdtempSync(join(tmpdir(), 'atrium-readme-home-'));
  dirs.push(cwd, home);
  const port = await freePort();
  const url = README_URL.replace(':8000', `:${port}`);
  const env = userEnv(home, { PORT: String(port), ATRIUM_URL: url });
  const sh = (command: string, extra: Record<string, string> = {}) => shell(command, { cwd, env: { ...env, ...extra } }, running);

  // The commands, by kind, in the README's order.
  const commands = quickStartCommands();
  const kinds = commands.map(({ words }) => {
    const text = words.join(' ');
    if (text === 'npm install && npm start') return 'install-and-start';
    if (text === 'npm test') return 'test';
    if (text.startsWith('npx atrium bootstrap ')) return 'bootstrap';
    if (words[0] === 'curl') return 'curl';
    return `unknown: ${text}`;
  });
  assert.deepEqual(kinds, ['install-and-start', 'test', 'bootstrap', 'curl'], 'the quick start\'s commands have the shape this test runs');
  const [installAndStart, , bootstrap, curl] = commands as [Command, Command, Command, Command];

  // `npm install && npm start`: the tree is installed already (the test runs from it; installing
  // again would take minutes and the network), so what runs is the part after `&&`, as copied.
  // (`npm test` is the suite this test belongs to: not run from inside it.)
  const start = installAndStart.line.slice(installAndStart.line.indexOf('&&') + 2).trim();
  assert.match(start, /^npm start\b/);
  assert.match(installAndStart.comment ?? '', new RegExp(`serves ${README_URL}`), 'the README says where the server is');

  // 1. Start on an empty database: the server names its URL and the one-time setup link.
  let server = sh(start);
  const [, printed] = await server.waitFor(/Atrium is listening: use (\S+) \(ATRIUM_PUBLIC_URL\)/, { timeoutMs: START_TIMEOUT_MS });
  assert.equal(printed, url, 'the URL to use everywhere is the README\'s, on our port');
  const [, setup] = await server.waitFor(/No account yet: open (\S+) to create the first admin/);
  assert.ok(setup!.startsWith(`${url}/console/setup?token=`), setup);
  assert.equal((await fetch(`${url}/healthz`)).status, 200);
  assert.ok(statSync(join(cwd, 'data')).isDirectory(), 'the embedded database is in ./data');

  // 2. "With the embedded database, stop the server first": Ctrl-C, then bootstrap.
  server.signal('SIGINT');
  const stopped = await finished(server, 30_000);
  assert.match(stopped.output, /"signal":"SIGINT","msg":"shutting down"/, stopped.output);
  const boot = await finished(sh(bootstrap.line), START_TIMEOUT_MS);
  assert.equal(boot.code, 0, boot.output);
  const result = JSON.parse(boot.stdout) as Record<string, string>;
  // The README shows the output under the command: the same fields come out.
  const shown = /→\s*(\{.*\})/.exec(bootstrap.comment ?? '')?.[1];
  assert.ok(shown, 'the README shows bootstrap\'s output');
  assert.deepEqual(Object.keys(result).sort(), Object.keys(JSON.parse(shown!.replaceAll('…', ''))).sort());
  assert.match(result.api_key!, /^ma-/);
  assert.match(result.user_token!, /^atp_/);
  const option = (name: string) => {
    const at = bootstrap.words.indexOf(name);
    assert.ok(at > 0 && bootstrap.words[at + 1], `bootstrap is given ${name}`);
    return bootstrap.words[at + 1]!;
  };
  const email = option('--email');
  const password = option('--password');

  // 3. Start again (no setup link now: there is an account) and call the API with curl, the
  // variables it names set from bootstrap's output ($API_KEY is api_key, $PROJECT_ID project_id).
  server = sh(start);
  await server.waitFor(/Atrium is listening: use/, { timeoutMs: START_TIMEOUT_MS });
  assert.doesNotMatch(server.output(), /No account yet/);
  assert.ok(curl.line.includes(README_URL), `curl calls ${README_URL}`);
  const variables = Object.fromEntries([...curl.line.matchAll(/\$([A-Z_]+)/g)].map(([, name]) => {
    const value = result[name!.toLowerCase()];
    assert.ok(value, `$${name} is a field of bootstrap's output`);
    return [name!, value];
  }));
  const listed = await finished(sh(curl.line.replaceAll(README_URL, url), variables));
  assert.equal(listed.code, 0, listed.output);
  assert.deepEqual(JSON.parse(listed.stdout).rooms, [], 'the new project\'s rooms, through the API key');

  // 4. Sign in with the device flow (docs/cli-login.md), opening the link the CLI prints.
  const login = sh('npx atrium login --device');
  const [, link] = await login.waitFor(/\(or open (\S+)\)/, { stream: 'stdout' });
  const [, code] = await login.waitFor(/enter the code\s+([A-Z]{4}-[A-Z]{4})/, { stream: 'stdout' });
  assert.equal(link, `${url}/oauth/device?user_code=${code}`);
  browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumLaunchArgs });
  const page = await browser.newPage();
  await page.goto(link!);
  // The first page a device-flow user sees is Atrium's, not the library's script page.
  await page.getByRole('heading', { name: 'Confirm the device' }).waitFor();
  assert.notEqual(await page.title(), 'Submitting Callback');
  assert.equal(await page.locator('#client-name').textContent(), 'Atrium CLI');
  assert.equal(await page.locator('#user-code').textContent(), code);
  // Evaluated in the page (a string: this project type-checks without DOM types).
  const look = await page.evaluate(`(() => {
    const logo = document.querySelector('#client-logo');
    return { logo: logo.complete && logo.naturalWidth > 0, background: getComputedStyle(document.body).backgroundColor };
  })()`) as { logo: boolean; background: string };
  assert.ok(look.logo, 'the logo loads under the page\'s CSP');
  assert.notEqual(look.background, 'rgba(0, 0, 0, 0)', 'the sign-in stylesheet applies');
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Allow' }).click();
  await page.getByRole('heading', { name: 'Device connected' }).waitFor();
  const signedIn = await finished(login);
  assert.equal(signedIn.code, 0, signedIn.output);
  assert.match(signedIn.stdout, new RegExp(`Signed in to ${url} as ${email}`));
  const whoami = await finished(sh('npx atrium whoami'));
  assert.equal(whoami.code, 0, whoami.output);
  assert.match(whoami.stdout, new RegExp(email));

  // 5. A test webhook to the listener, in docs/webhook-receiver.md's order: register the webhook
  // (its secret is printed once), start the listener with that secret, send the test event.
  const listenerPort = await freePort();
  const created = await finished(sh(`npx atrium webhooks create http://127.0.0.1:${listenerPort}/webhook --event '*' --json`));
  assert.equal(created.code, 0, created.output);
  const webhook = JSON.parse(created.stdout) as { id: string; secret: string };
  assert.match(webhook.secret, /^[A-Za-z0-9_-]{43}$/);
  const listener = sh(`npx atrium webhooks listen --port ${listenerPort}`, { ATRIUM_WEBHOOK_SECRET: webhook.secret });
  await listener.waitFor(new RegExp(`listening on http://127\\.0\\.0\\.1:${listenerPort}/webhook`));
  const sent = await finished(sh(`npx atrium webhooks test ${webhook.id}`));
  assert.equal(sent.code, 0, sent.output);
  const [, deliveryId] = /Queued test delivery (\S+)/.exec(sent.stdout) ?? assert.fail(sent.output);
  const [line] = await listener.waitFor(/^\{.*"event":"webhook\.test".*\}$/m, { stream: 'stdout' });
  const received = JSON.parse(line) as { transport: string; event: string; attempt: number };
  assert.equal(received.transport, 'post');
  assert.equal(received.attempt, 1);
  const history = await finished(sh(`npx atrium webhooks deliveries ${webhook.id} --json`));
  assert.equal(history.code, 0, history.output);
  const delivery = (JSON.parse(history.stdout) as { deliveries: { id: string; event: string }[] }).deliveries.find((d) => d.id === deliveryId);
  assert.equal(delivery?.event, 'webhook.test', history.stdout);

  // Ctrl-C ends the listener and the server cleanly.
  listener.signal('SIGINT');
  assert.match((await finished(listener, 30_000)).output, /atrium webhooks: stopped \(SIGINT\)/);
  server.signal('SIGINT');
  assert.match((await finished(server, 30_000)).output, /"msg":"shutting down"/);
});
