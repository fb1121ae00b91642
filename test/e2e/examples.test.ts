// Every example under examples/ runs through an npm script, on the project's own Node whatever
// `node` the shell has, and its README says to run it that way; the webhook receiver, started with
// its script, verifies and handles a signed delivery (the sample app's flow: sample-app.test.ts).
// The README states the Node version the dependencies really need.
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

/** The least version a range of `engines.node` admits ("^18.19.0 || >=20.6.0" → 18.19.0), as numbers. */
function leastVersion(range: string): number[] {
  const bounds = range.split('||').map((alternative) => (/(\d+)(?:\.(\d+))?(?:\.(\d+))?/.exec(alternative) ?? []).slice(1, 4).map((n) => Number(n ?? 0)));
  return bounds.sort(compareVersions)[0]!;
}

function compareVersions(a: number[], b: number[]): number {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return 0;
}

test('the README names the Node version the dependencies need, and the one npm install needs', () => {
  const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { engines: { node: string }; dependencies: Record<string, string> };
  let needed = [0, 0, 0];
  for (const name of Object.keys(pkg.dependencies)) {
    const engines = (JSON.parse(readFileSync(join(repoRoot, 'node_modules', name, 'package.json'), 'utf8')) as { engines?: { node?: string } }).engines?.node;
    if (engines && name !== 'node' && compareVersions(leastVersion(engines), needed) > 0) needed = leastVersion(engines);
  }
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8').replace(/\s+/g, ' ');
  const stated = /`node file\.ts` with a system Node older than (\d+(?:\.\d+)*) fails/.exec(readme)?.[1];
  assert.ok(stated, 'the README says which system Node runs the code directly');
  assert.equal(stated, needed.slice(0, needed[2] ? 3 : 2).join('.'), 'the README\'s version is the highest the dependencies declare');
  assert.match(readme, new RegExp(`any Node\\.js ≥ ${leastVersion(pkg.engines.node)[0]} to run it`), 'and npm install\'s, from package.json engines');
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
