// The CLI's command groups as a person runs them against a live server, signed in through the stored
// credentials (one stored server is the default, its only project too), a table by default and
// --json, the API's own error messages. The groups run in this process through their `io` (what they
// print and the environment they read), as `atrium <group>` runs them; the sign-in commands, and one
// group command as a smoke test of the dispatch, run the real `atrium` in a child process.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { GROUPS, runGroup } from '../../src/cli/groups.ts';
import { EMAIL_LOGIN_ENV } from '../support/oauth.ts';
import { createTenant, createUserWithToken, startTestService, type Tenant, type TestService } from '../support/service.ts';

const CLI = resolve(import.meta.dirname, '../../src/cli/main.ts');

let service: TestService;
let tenant: Tenant;
let home: string;
let env: Record<string, string>;

interface Run { code: number; stdout: string; stderr: string }

/** `atrium …` in a child process: the command as installed. */
function spawned(args: string[], extra: Record<string, string> = {}): Promise<Run> {
  const child = spawn(process.execPath, [CLI, ...args], { cwd: home, env: { PATH: process.env.PATH ?? '', ...env, ...extra }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => { stdout += d.toString(); });
  child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
  return new Promise((r) => child.once('close', (code) => r({ code: code ?? 1, stdout, stderr })));
}

/** `atrium <group> …` in this process, with the same environment a child would get. */
async function atrium(args: string[], extra: Record<string, string> = {}): Promise<Run> {
  const [name, ...rest] = args;
  const group = GROUPS.find((g) => g.name === name);
  if (!group) throw new Error(`not a command group: ${name}`);
  let stdout = '';
  let stderr = '';
  const code = await runGroup(group, rest, {
    out: { write: (text: string) => { stdout += text; } },
    err: { write: (text: string) => { stderr += text; } },
    env: { PATH: process.env.PATH ?? '', ...env, ...extra },
  });
  return { code, stdout, stderr };
}

async function ok(args: string[], extra: Record<string, string> = {}, run: (args: string[], extra: Record<string, string>) => Promise<Run> = atrium): Promise<string> {
  const result = await run(args, extra);
  assert.equal(result.code, 0, `atrium ${args.join(' ')} exited ${result.code}:\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

const json = async <T = any>(args: string[]) => JSON.parse(await ok([...args, '--json'])) as T;

before(async () => {
  service = await startTestService('postgres', { ...EMAIL_LOGIN_ENV, ATRIUM_WEBHOOKS_ALLOW_PRIVATE: 'true' });
  tenant = await createTenant(service, 'cli-groups');
  home = mkdtempSync(join(tmpdir(), 'atrium-cli-groups-'));
  const configDir = join(home, 'config');
  mkdirSync(configDir, { mode: 0o700 });
  // A stored sign-in to exactly one server: what `atrium login` leaves behind.
  writeFileSync(join(configDir, 'credentials.json'), JSON.stringify({
    version: 1,
    servers: { [service.url]: { access_token: tenant.userToken, token_type: 'Bearer', client_id: 'atrium-cli', saved_at: new Date().toISOString() } },
  }), { mode: 0o600 });
  env = { HOME: home, ATRIUM_CONFIG_DIR: configDir };
});
after(async () => {
  await service?.stop();
  if (home) rmSync(home, { recursive: true, force: true });
});

describe('the stored server and the sign-in', () => {
  test('whoami and token use the one stored server without --server; the installed command runs a group', async () => {
    assert.match(await ok(['whoami'], {}, spawned), new RegExp(tenant.email));
    assert.equal((await ok(['token'], {}, spawned)).trim(), tenant.userToken);
    const listed = JSON.parse(await ok(['projects', 'list', '--json'], {}, spawned)) as { id: string }[];
    assert.deepEqual(listed.map((p) => p.id), [tenant.projectId]);
    const unknown = await spawned(['projects', 'frobnicate']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /unknown projects command "frobnicate"/);
  });

  test('not signed in: the hint is the exact command to run', async () => {
    const run = await atrium(['projects', 'list'], { ATRIUM_CONFIG_DIR: join(home, 'empty'), ATRIUM_URL: service.url });
    assert.equal(run.code, 1);
    assert.ok(run.stderr.includes(`Not signed in to ${service.url}. Run: npx atrium login --server ${service.url}`), run.stderr);
  });

  test('ATRIUM_TOKEN replaces the stored sign-in; an unreachable server is named', async () => {
    const other = await createUserWithToken(service, 'other');
    const mine = await json<{ id: string }[]>(['projects', 'list', '--server', service.url]);
    assert.ok(mine.some((p) => p.id === tenant.projectId));
    const theirs = JSON.parse(await ok(['projects', 'list', '--json'], { ATRIUM_TOKEN: other.token })) as unknown[];
    assert.deepEqual(theirs, []);
    const down = await atrium(['projects', 'list', '--server', 'http://127.0.0.1:9'], { ATRIUM_TOKEN: other.token });
    assert.equal(down.code, 1);
    assert.match(down.stderr, /Cannot reach http:\/\/127\.0\.0\.1:9/);
  });
});

describe('command groups', () => {
  test('every group has help', async () => {
    for (const group of ['projects', 'members', 'rooms', 'api-keys', 'oauth-clients', 'webhooks', 'storage']) {
      const help = await ok([group, '--help']);
      assert.match(help, new RegExp(`Usage: atrium ${group} <command>`));
    }
    assert.match(await ok(['storage', 'cp', '--help']), /--project ID/);
  });

  test('projects: list as a table and JSON, show, create', async () => {
    const listed = await ok(['projects', 'list']);
    assert.match(listed, /^ID\s+NAME\s+ENABLED\s+CREATED_AT\n/);
    assert.ok(listed.includes(tenant.projectId));
    const shown = await json(['projects', 'show']);
    assert.equal(shown.id, tenant.projectId, 'the only project is the default');
    const created = await json(['projects', 'create', 'Second']);
    assert.equal(created.name, 'Second');
    // Now there are two: a project must be named.
    const ambiguous = await atrium(['rooms', 'list']);
    assert.equal(ambiguous.code, 2);
    assert.match(ambiguous.stderr, /member of 2 projects: choose one with --project ID or ATRIUM_PROJECT=ID/);
    env.ATRIUM_PROJECT = tenant.projectId;
  });

  test('members: add a known address, invite an unknown one, list, resend and revoke invitations', async () => {
    const known = await createUserWithToken(service, 'known');
    assert.match(await ok(['members', 'add', known.email, '--role', 'developer']), new RegExp(`Added ${known.email}`));
    const members = await json<{ users: { email: string; roles: string[] }[] }>(['members', 'list']);
    assert.deepEqual(members.users.find((u) => u.email === known.email)?.roles, ['developer']);
    assert.match(await ok(['members', 'invite', 'newcomer@example.test']), /Invited newcomer@example\.test/);
    const invitations = await json<{ invitations: { id: string; email: string }[] }>(['members', 'invitations']);
    const invitation = invitations.invitations.find((i) => i.email === 'newcomer@example.test')!;
    assert.ok(invitation);
    assert.match(await ok(['members', 'resend', invitation.id]), /Sent again to newcomer@example\.test/);
    assert.match(await ok(['members', 'revoke', invitation.id]), /Revoked/);
    const again = await atrium(['members', 'revoke', invitation.id]);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /Invitation not found \(not_found, HTTP 404\)/);
  });

  test('rooms: create, list, connect, delete', async () => {
    await ok(['rooms', 'create', 'lobby']);
    assert.match(await ok(['rooms', 'list']), /lobby/);
    const connection = await json(['rooms', 'connect', 'lobby']);
    assert.equal(connection.room_name, 'lobby');
    assert.ok(connection.jwt.split('.').length === 3);
    assert.match(await ok(['rooms', 'delete', 'lobby']), /Deleted room lobby/);
    const gone = await atrium(['rooms', 'connect', 'lobby']);
    assert.equal(gone.code, 1);
    assert.match(gone.stderr, /not found/);
  });

  test('api-keys: create (value shown once), list, delete', async () => {
    const key = await json(['api-keys', 'create', 'ci', '--role', 'developer']);
    assert.ok(key.value);
    const listed = await ok(['api-keys', 'list']);
    assert.match(listed, /\bci\b/);
    assert.ok(!listed.includes(key.value), 'values are not listed');
    // The new key works as ATRIUM_TOKEN.
    const asKey = JSON.parse(await ok(['rooms', 'list', '--json'], { ATRIUM_TOKEN: key.value })) as { rooms: unknown[] };
    assert.ok(Array.isArray(asKey.rooms));
    await ok(['api-keys', 'delete', key.id]);
    assert.doesNotMatch(await ok(['api-keys', 'list']), /\bci\b/);
  });

  test('audit: who did what, filtered, as a table and as JSON Lines', async () => {
    const key = await json(['api-keys', 'create', 'audited', '--role', 'member']);
    await ok(['api-keys', 'delete', key.id]);
    const listed = await ok(['audit', 'list', '--target', key.id]);
    assert.match(listed, /api_key\.create/);
    assert.match(listed, /api_key\.delete/);
    assert.match(listed, new RegExp(`user:${tenant.email}`));
    const lines = (await ok(['audit', 'list', '--action', 'api_key.*', '--limit', '0', '--jsonl'])).trim().split('\n').map((line) => JSON.parse(line) as { action: string; target: { id: string } });
    assert.ok(lines.length >= 2 && lines.every((entry) => entry.action.startsWith('api_key.')));
    assert.deepEqual(lines.filter((entry) => entry.target.id === key.id).map((entry) => entry.action), ['api_key.delete', 'api_key.create']);
    assert.equal((await atrium(['audit', 'list', '--outcome', 'maybe'])).code, 2);
  });

  test('oauth-clients: create, list, show, delete; bad input gets the API message', async () => {
    const created = await json(['oauth-clients', 'create', 'Spa', '--redirect-uri', 'https://spa.example/callback', '--public']);
    assert.equal(created.public, true);
    assert.match(await ok(['oauth-clients', 'list']), /Spa/);
    assert.equal((await json(['oauth-clients', 'show', created.client_id])).name, 'Spa');
    await ok(['oauth-clients', 'delete', created.client_id]);
    const bad = await atrium(['oauth-clients', 'create', 'Bad', '--redirect-uri', 'not a url']);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /\(invalid_request, HTTP 400\)/);
    const usage = await atrium(['oauth-clients', 'create', 'NoRedirect']);
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /--redirect-uri/);
  });

  test('webhooks: create, list, deliveries, delete', async () => {
    const hook = await json(['webhooks', 'create', 'http://127.0.0.1:9/hook', '--event', 'room.started']);
    assert.match(hook.secret, /^[\w-]{43}$/, 'a new signing secret, printed once');
    assert.match(await ok(['webhooks', 'list']), /127\.0\.0\.1:9\/hook/);
    assert.deepEqual((await json(['webhooks', 'deliveries', hook.id])).deliveries, []);
    assert.match(await ok(['webhooks', 'test', hook.id]), /Queued test delivery/);
    const history = await json(['webhooks', 'deliveries', hook.id]);
    assert.equal(history.deliveries.length, 1);
    assert.equal(history.deliveries[0].event, 'webhook.test');
    const redeliver = await atrium(['webhooks', 'redeliver', hook.id, '00000000-0000-4000-8000-000000000000']);
    assert.equal(redeliver.code, 1);
    assert.match(redeliver.stderr, /Delivery not found/);
    await ok(['webhooks', 'delete', hook.id]);
    assert.match(await ok(['webhooks', 'list']), /\(none\)/);
  });

  test('storage: cp up and down with a progress line, ls, rm', async () => {
    const local = join(home, 'notes.txt');
    const content = 'hello storage\n'.repeat(1000);
    writeFileSync(local, content);
    const up = await atrium(['storage', 'cp', local, ':docs/']);
    assert.equal(up.code, 0, up.stderr);
    assert.match(up.stdout, /Uploaded .*notes\.txt to :docs\/notes\.txt/);
    assert.match(up.stderr, /docs\/notes\.txt\s+14\.0 kB\s+done/, 'the final progress line');
    const listing = await ok(['storage', 'ls', ':docs']);
    assert.match(listing, /notes\.txt\s+14\.0 kB/);
    const down = await atrium(['storage', 'cp', ':docs/notes.txt', join(home, 'copy.txt')]);
    assert.equal(down.code, 0, down.stderr);
    assert.equal(readFileSync(join(home, 'copy.txt'), 'utf8'), content);
    await ok(['storage', 'rm', ':docs/notes.txt']);
    assert.doesNotMatch(await ok(['storage', 'ls', ':docs']), /notes\.txt/);
    const both = await atrium(['storage', 'cp', local, join(home, 'x')]);
    assert.equal(both.code, 2);
    assert.match(both.stderr, /leading ":"/);
  });
});

