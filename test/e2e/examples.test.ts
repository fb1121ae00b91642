// Every example under examples/ runs through an npm script, on the project's own Node whatever
// `node` the shell has, and its README says to run it that way; the webhook receiver, started with
// its script, verifies and handles a signed delivery. (The sample app's flow: sample-app.test.ts.)
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, test } from 'node:test';
import { signatureHeader } from '../../src/modules/webhooks/body.ts';
import { freePort } from '../support/service.ts';
import { codeBlocks, finished, shell, stopAll, type ShellRun } from '../support/shell.ts';

const repoRoot = resolve(import.meta.dirname, '../..');
const scripts = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
const examples = readdirSync(join(repoRoot, 'examples'), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);

const running = new Set<ShellRun>();
const dirs: string[] = [];
after(() => {
  stopAll(running);
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** The npm script that runs an example, and the file it runs. */
function scriptOf(example: string): { name: string; file: string } | undefined {
  for (const [name, command] of Object.entries(scripts)) {
    const file = new RegExp(`^exec node (examples/${example}/\\S+\\.ts)$`).exec(command)?.[1];
    if (file) return { name, file };
  }
  return undefined;
}

test('every example has an npm script, and its README runs it with that script, never with a bare node', () => {
  assert.ok(examples.length >= 2, `examples: ${examples.join(', ')}`);
  for (const example of examples) {
    const script = scriptOf(example);
    assert.ok(script, `package.json has a script "exec node examples/${example}/….ts"`);
    assert.ok(existsSync(join(repoRoot, script.file)), script.file);
    const readme = readFileSync(join(repoRoot, 'examples', example, 'README.md'), 'utf8');
    const lines = codeBlocks(readme).filter((b) => ['sh', 'console', ''].includes(b.lang)).flatMap((b) => b.lines);
    assert.ok(lines.some((line) => line.includes(`npm run ${script.name}`)), `examples/${example}/README.md runs it with npm run ${script.name}`);
    // `node …` with whatever node the shell has fails below 22: the project's own is `npx node`.
    const bare = lines.filter((line) => /(?<![\w./:-])(?<!npx )node\s/.test(line));
    assert.deepEqual(bare, [], `examples/${example}/README.md starts no bare node`);
  }
});

test('`npm run webhook-receiver` receives a signed delivery and refuses an unsigned one', async () => {
  const home = mkdtempSync(join(tmpdir(), 'atrium-example-home-'));
  dirs.push(home);
  const port = await freePort();
  const secret = `example-secret-${randomUUID()}`;
  // A user's shell: an old system node on PATH would not matter, the script brings its own.
  const receiver = shell('npm run webhook-receiver', {
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, PORT: String(port), HOST: '127.0.0.1', ATRIUM_WEBHOOK_SECRET: secret },
  }, running);
  await receiver.waitFor(new RegExp(`receiving webhooks on http://127\\.0\\.0\\.1:${port}/webhook`));

  const body = Buffer.from(JSON.stringify({ event: 'room.started', data: { room_name: 'lobby' } }));
  const post = (headers: Record<string, string>) => fetch(`http://127.0.0.1:${port}/webhook`, {
    method: 'POST', body, headers: { 'content-type': 'application/json', 'service-event-id': randomUUID(), ...headers },
  });
  const signed = await post({ 'service-signature': signatureHeader(secret, body, Math.floor(Date.now() / 1000)) });
  assert.equal(signed.status, 200, await signed.text());
  await receiver.waitFor(/room lobby started/);
  assert.equal((await post({})).status, 401);

  receiver.signal('SIGINT');
  await finished(receiver, 30_000);
});
