// The CLI's command groups as a person runs them against a live server, signed in through the stored
// credentials (one stored server is the default, its only project too), a table by default and
// --json, the API's own error messages; every page of the console from the command line; deletes
// that ask first on a terminal; the nearest command for a mistyped one. The groups run in this
// process through their `io` (what they print, the environment they read, the terminal's answers),
// as `atrium <group>` runs them; the sign-in commands, and a group command and a mistyped command as
// smoke tests of the dispatch, run the real `atrium` in a child process.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { adjust } from '../../src/modules/billing/service.ts';
import { startSession } from '../../src/modules/sessions/service.ts';
import { GROUPS, runGroup } from '../../src/cli/groups.ts';
import { call } from '../support/service.ts';
import { EMAIL_LOGIN_ENV } from '../support/oauth.ts';
import { LOCAL_PAYMENTS_ENV } from '../support/payments.ts';
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

/** `atrium <group> …` in this process, with the same environment a child would get; `answers`: a terminal that answers questions so. */
async function atrium(args: string[], extra: Record<string, string> = {}, answers?: string[]): Promise<Run & { asked: string[] }> {
  const [name, ...rest] = args;
  const group = GROUPS.find((g) => g.name === name);
  if (!group) throw new Error(`not a command group: ${name}`);
  let stdout = '';
  let stderr = '';
  const asked: string[] = [];
  const code = await runGroup(group, rest, {
    out: { write: (text: string) => { stdout += text; } },
    err: { write: (text: string) => { stderr += text; } },
    env: { PATH: process.env.PATH ?? '', ...env, ...extra },
    ...(answers ? { ask: async (question: string) => { asked.push(question); return answers.shift() ?? ''; } } : {}),
  });
  return { code, stdout, stderr, asked };
}

async function ok(args: string[], extra: Record<string, string> = {}, run: (args: string[], extra: Record<string, string>) => Promise<Run> = atrium): Promise<string> {
  const result = await run(args, extra);
  assert.equal(result.code, 0, `atrium ${args.join(' ')} exited ${result.code}:\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

const json = async <T = any>(args: string[]) => JSON.parse(await ok([...args, '--json'])) as T;

before(async () => {
  service = await startTestService('postgres', { ...EMAIL_LOGIN_ENV, ...LOCAL_PAYMENTS_ENV, ATRIUM_WEBHOOKS_ALLOW_PRIVATE: 'true', ATRIUM_MAIL_DOMAINS: 'mail.example.test' });
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
    // A mistyped command is answered with the nearest one, not the whole help.
    const typo = await spawned(['scheduled-task', 'list']);
    assert.equal(typo.code, 2);
    assert.equal(typo.stderr, 'atrium: unknown command "scheduled-task". Did you mean `atrium scheduled-tasks`?\nRun `atrium help` for the commands.\n');
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
    for (const group of GROUPS) {
      const help = await ok([group.name, '--help']);
      assert.match(help, new RegExp(`Usage: atrium ${group.name} <command>`));
    }
    assert.match(await ok(['storage', 'cp', '--help']), /--project ID/);
    assert.match(await ok(['rooms', 'delete', '--help']), /--yes\s+Do not ask for confirmation on a terminal/);
    const typo = await atrium(['rooms', 'lsit']);
    assert.equal(typo.code, 2);
    assert.equal(typo.stderr, 'atrium: unknown rooms command "lsit". Did you mean `atrium rooms list`?\nRun `atrium rooms --help` for its commands.\n');
    const nothingClose = await atrium(['rooms', 'frobnicate']);
    assert.doesNotMatch(nothingClose.stderr, /Did you mean/);
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
    // On a terminal a delete asks first: "n" (or nothing) changes nothing, "y" deletes.
    const declined = await atrium(['rooms', 'delete', 'lobby'], {}, ['n']);
    assert.deepEqual([declined.code, declined.asked, declined.stderr], [1, ['Delete room lobby? [y/N] '], 'Nothing was changed.\n']);
    assert.equal((await json(['rooms', 'show', 'lobby'])).name, 'lobby');
    const confirmed = await atrium(['rooms', 'delete', 'lobby'], {}, ['y']);
    assert.equal(confirmed.code, 0, confirmed.stderr);
    assert.match(confirmed.stdout, /Deleted room lobby/);
    // --yes skips the question; without a terminal (a script) nothing is asked.
    await ok(['rooms', 'create', 'lobby']);
    const skipped = await atrium(['rooms', 'delete', 'lobby', '--yes'], {}, []);
    assert.deepEqual([skipped.code, skipped.asked], [0, []]);
    await ok(['rooms', 'create', 'lobby']);
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


describe('every page of the console from the command line', () => {
  const file = (name: string, text: string) => {
    const path = join(home, name);
    writeFileSync(path, text);
    return path;
  };

  test('members roles: every role, grouped and in words', async () => {
    const listed = await ok(['members', 'roles']);
    assert.match(listed, /^NAME\s+GROUP\s+DESCRIPTION\n/);
    assert.match(listed, /feed_manager\s+Integrations\s+Updates and deletes feeds\./);
  });

  test('agents: create from a file, list, show, update, connect, delete', async () => {
    const spec = file('agent.yaml', 'version: v1\nkind: ManagedAgent\nmetadata:\n  annotations: { team: cli }\n');
    const created = await json(['agents', 'create', 'helper', '--file', spec]);
    assert.equal(created.name, 'helper');
    assert.match(await ok(['agents', 'list', '--filter', 'help']), /helper/);
    assert.deepEqual((await json(['agents', 'show', 'helper'])).configuration.metadata.annotations, { team: 'cli' });
    await ok(['agents', 'update', 'helper', '--file', file('agent2.json', '{"metadata": {"annotations": {"team": "ops"}}}')]);
    assert.deepEqual((await json(['agents', 'show', 'helper'])).configuration.metadata.annotations, { team: 'ops' });
    assert.equal((await json(['agents', 'connect', 'helper'])).agent_name, 'helper');
    await ok(['agents', 'delete', 'helper']);
    assert.match(await ok(['agents', 'list']), /\(none\)/);
    const bad = await atrium(['agents', 'create', 'x', '--file', file('bad.yaml', '- a list')]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /must hold an object/);
  });

  test('scheduled tasks: create, list, show, runs by state, delete', async () => {
    await ok(['rooms', 'create', 'ops']);
    const created = await json(['scheduled-tasks', 'create', '--room', 'ops', '--schedule', '0 6 * * *', '--queue', 'reports', '--name', 'morning', '--payload', '{"kind": "report"}']);
    assert.equal(created.room_name, 'ops');
    assert.match(await ok(['scheduled-tasks', 'list', '--filter', 'morn']), /reports/);
    assert.deepEqual((await json(['scheduled-tasks', 'show', created.id])).payload, { kind: 'report' });
    assert.deepEqual((await json(['scheduled-tasks', 'runs', created.id, '--status', 'failed'])).runs, []);
    const refused = await atrium(['scheduled-tasks', 'create', '--room', 'ops', '--schedule', 'now and then', '--queue', 'q']);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /cron expression|interval/);
    await ok(['scheduled-tasks', 'delete', created.id]);
    assert.match(await ok(['scheduled-tasks', 'list']), /\(none\)/);
  });

  test('services: a spec and a template from files, the project\'s and a room\'s, show, update, delete', async () => {
    const spec = file('service.yaml', 'version: v1\nkind: Service\nmetadata:\n  name: echo\ncontainer:\n  image: ghcr.io/example/echo:1\nports:\n  - num: 8080\n    type: http\n');
    const created = await json(['services', 'create', '--file', spec]);
    assert.match(await ok(['services', 'list']), /echo/);
    assert.equal((await json(['services', 'show', created.id])).container.image, 'ghcr.io/example/echo:1');
    await ok(['services', 'update', created.id, '--file', file('service2.yaml', 'version: v1\nkind: Service\nmetadata:\n  name: echo\ncontainer:\n  image: ghcr.io/example/echo:2\n')]);
    assert.equal((await json(['services', 'show', created.id])).container.image, 'ghcr.io/example/echo:2');
    const template = file('template.yaml', 'version: v1\nkind: ServiceTemplate\nmetadata:\n  name: "{{ name }}"\nvariables:\n  - name: name\ncontainer:\n  image: ghcr.io/example/worker:1\n');
    const own = await json(['services', 'create', '--file', template, '--values', '{"name": "worker"}', '--room', 'ops']);
    assert.match(await ok(['services', 'list', '--room', 'ops']), /worker/);
    await ok(['services', 'delete', own.id, '--room', 'ops']);
    await ok(['services', 'delete', created.id]);
    const mixed = await atrium(['services', 'create', '--file', spec, '--values', '{}']);
    assert.equal(mixed.code, 2);
    assert.match(mixed.stderr, /--values is for a ServiceTemplate/);
  });

  test('secrets: the value from a file, never printed; a keys value that is not JSON is refused; update, delete', async () => {
    const notJson = await atrium(['secrets', 'create', 'openai', '--value-file', file('v0', 'sk-not-json\n')]);
    assert.equal(notJson.code, 2);
    assert.match(notJson.stderr, /A keys secret is a JSON object of strings/);
    const created = await atrium(['secrets', 'create', 'openai', '--value-file', file('v1', '{"OPENAI_API_KEY": "sk-cli-value"}\n')]);
    assert.equal(created.code, 0, created.stderr);
    assert.ok(!created.stdout.includes('sk-cli-value'));
    const [secret] = (await json<{ secrets: { id: string; name: string; type: string }[] }>(['secrets', 'list'])).secrets;
    assert.deepEqual([secret!.name, secret!.type], ['openai', 'keys']);
    await ok(['secrets', 'update', secret!.id, '--type', 'opaque', '--value-file', file('v2', 'plain text')]);
    const stored = await call(service, 'GET', `/accounts/projects/${tenant.projectId}/secrets/${secret!.id}`, { token: tenant.apiKey });
    assert.equal(Buffer.from(stored.body.data_base64, 'base64').toString(), 'plain text');
    await ok(['secrets', 'create', 'github', '--type', 'opaque', '--room', 'ops', '--for-identity', 'alice', '--value-file', file('v3', 'ghp')]);
    assert.match(await ok(['secrets', 'list', '--room', 'ops']), /github\s+opaque\s+alice/);
    await ok(['secrets', 'delete', secret!.id]);
  });

  test('shares, external OAuth, LLM loggers and feeds with their subscriptions', async () => {
    const share = await json(['shares', 'create', '--room', 'ops', '--label', 'Demo']);
    assert.match(share.token, /^ash_/);
    assert.match(await ok(['shares', 'list', '--filter', 'demo']), /Demo\s+ops/);
    await ok(['shares', 'delete', share.id]);

    const registration = await json(['external-oauth', 'create', '--client-id', 'agents-app', '--client-secret-file', file('cs', 's3cret\n'), '--authorization-endpoint', 'https://accounts.example.com/authorize', '--token-endpoint', 'https://accounts.example.com/token', '--scope', 'read']);
    assert.equal(registration.has_client_secret, true);
    assert.match(await ok(['external-oauth', 'list']), /agents-app/);
    await ok(['external-oauth', 'delete', registration.id]);

    const feed = await json(['feeds', 'create', 'orders', '--visibility', 'project', '--schema', file('schema.json', '{"type": "object", "required": ["id"]}')]);
    assert.equal(feed.visibility, 'project');
    const refused = await atrium(['feeds', 'publish', 'orders', '{"no": "id"}']);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /message_schema/);
    const subscription = await json(['feeds', 'subscribe', 'orders', '--room', 'ops', '--path', 'feeds/orders']);
    assert.match(await ok(['feeds', 'subscriptions', 'orders']), /ops\s+feeds\/orders/);
    assert.match(await ok(['feeds', 'publish', 'orders', '{"id": 1}']), /Published message/);
    assert.equal((await json(['feeds', 'update', 'orders', '--pause'])).paused, true);
    const paused = await atrium(['feeds', 'publish', feed.id, '{"id": 2}']);
    assert.equal(paused.code, 1);

    const logger = await json(['llm-loggers', 'create', '--feed', 'orders', '--expression', "model == 'gpt-5'"]);
    assert.equal(logger.destination_feed_id, feed.id);
    assert.equal((await json(['llm-loggers', 'update', logger.id, '--pause'])).paused, true);
    assert.match(await ok(['llm-loggers', 'list', '--filter', 'gpt-5']), /gpt-5/);
    const badFilter = await atrium(['llm-loggers', 'create', '--feed', 'orders', '--expression', 'model ==']);
    assert.equal(badFilter.code, 1);
    await ok(['llm-loggers', 'delete', logger.id]);

    await ok(['feeds', 'update', 'orders', '--resume']);
    await ok(['feeds', 'unsubscribe', 'orders', subscription.id]);
    await ok(['feeds', 'delete', 'orders']);
    const gone = await atrium(['feeds', 'show', 'orders']);
    assert.equal(gone.code, 2);
    assert.match(gone.stderr, /no feed named "orders"/);
  });

  test('routes, mailboxes, repositories and resource policies', async () => {
    const spec = (port: number) => file('route.yaml', `version: v1\nkind: Route\ndomain: cli.example.test\nbackend:\n  room:\n    name: ops\npaths:\n  - path: /\n    pathType: prefix\n    targetPort: ${port}\n`);
    await ok(['routes', 'create', '--file', spec(8080)]);
    assert.match(await ok(['routes', 'list']), /cli\.example\.test\s+ops/);
    await ok(['routes', 'update', 'cli.example.test', '--file', spec(9000)]);
    assert.equal((await json(['routes', 'show', 'cli.example.test'])).port, 9000);
    await ok(['routes', 'delete', 'cli.example.test']);

    const mailbox = await json(['mailboxes', 'create', 'support@mail.example.test', '--room', 'ops', '--queue', 'inbox']);
    assert.equal(mailbox.public, false);
    assert.equal((await json(['mailboxes', 'update', 'support@mail.example.test', '--public', '--queue', 'tickets'])).queue, 'tickets');
    assert.match(await ok(['mailboxes', 'list']), /support@mail\.example\.test\s+ops\s+tickets\s+true/);
    await ok(['mailboxes', 'delete', 'support@mail.example.test']);

    const repository = await json(['repositories', 'create', 'worker']);
    assert.match(await ok(['repositories', 'list']), /worker/);
    assert.equal((await json(['repositories', 'token', 'worker', '--push'])).token.split('.').length, 3);

    await ok(['policies', 'grant', 'room', 'ops', '--members', '--role', 'viewer']);
    await ok(['policies', 'grant', 'repository', 'worker', '--user', tenant.email, '--role', 'developer']);
    assert.match(await ok(['policies', 'list', 'room', 'ops']), /every project member\s+userset\s+viewer/);
    assert.match(await ok(['policies', 'list', 'repository', repository.id]), new RegExp(`${tenant.email}\\s+user\\s+developer`));
    await ok(['policies', 'revoke', 'room', 'ops', '--members']);
    assert.match(await ok(['policies', 'list', 'room', 'ops']), /\(none\)/);
    const noSubject = await atrium(['policies', 'grant', 'room', 'ops', '--role', 'viewer']);
    assert.equal(noSubject.code, 2);
    await ok(['repositories', 'delete', 'worker']);
  });

  test('sessions: running and recent, show, events, terminate', async () => {
    const { session } = await startSession(service.ctx, tenant.projectId, { room_name: 'ops' });
    assert.match(await ok(['sessions', 'list']), new RegExp(`${session.id}\\s+ops`));
    assert.equal((await json(['sessions', 'show', session.id])).room_name, 'ops');
    assert.match(await ok(['sessions', 'events', session.id, '--type', 'session.started']), /session\.started/);
    assert.match(await ok(['sessions', 'terminate', session.id]), /Asked the room server to end/);
    assert.match(await ok(['sessions', 'list', '--all', '--filter', 'op']), new RegExp(session.id));
  });

  test('billing and usage: balance, transactions, auto-recharge; `atrium usage` alone is the report', async () => {
    await adjust(service.ctx, tenant.projectId, 2_000_000n, 'cli-credit', 'Welcome credit');
    assert.match(await ok(['billing', 'balance']), /balance:\s+2\b/);
    assert.match(await ok(['billing', 'transactions', '--filter', 'welcome']), /adjustment\s+Welcome credit\s+2/);
    const recharge = await json(['billing', 'recharge', '--on', '--amount', '10', '--threshold', '1']);
    assert.equal(recharge.auto_recharge_enabled, true);
    const report = await atrium(['usage']);
    assert.equal(report.code, 0, report.stderr);
    assert.match(report.stdout, /\(none\)|MODEL/);
    assert.match(await ok(['usage', '--by', 'day', '--json']), /"interval": "day"/);
    const wrong = await atrium(['usage', '--by', 'week']);
    assert.equal(wrong.code, 2);
    assert.match(wrong.stderr, /--by is one of model, provider, room, day/);
  });
});
