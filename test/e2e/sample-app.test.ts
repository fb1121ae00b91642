// The sample app (examples/sample-app) started with its one command against a live Atrium: it
// registers its OAuth client through the API, reuses it on restart, sends users to Atrium's
// authorization endpoint with PKCE S256 and state, and after sign-in (driven through Atrium's real
// forms) shows the rooms it picked with participant tokens minted for the user.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { chooseRooms } from '../../examples/sample-app/server.ts';
import { EMAIL_LOGIN_ENV, FormBrowser } from '../support/oauth.ts';
import { call, createTenant, createUserWithToken, freePort, startTestService, type Tenant, type TestService } from '../support/service.ts';

const SERVER = resolve(import.meta.dirname, '../../examples/sample-app/server.ts');

interface Running { child: ChildProcess; output: string }

/** Starts the app as `npm run sample-app` does and waits for its "listening" line. */
async function startApp(env: Record<string, string>): Promise<Running> {
  const child = spawn(process.execPath, [SERVER], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const running: Running = { child, output: '' };
  await new Promise<void>((resolveStart, reject) => {
    const timer = setTimeout(() => reject(new Error(`sample app did not start in time:\n${running.output}`)), 20_000);
    const onData = (chunk: Buffer) => {
      running.output += chunk.toString();
      if (running.output.includes('Sample app listening on')) {
        clearTimeout(timer);
        resolveStart();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`sample app exited with ${code}:\n${running.output}`));
    });
  });
  return running;
}

async function stopApp(running: Running | undefined): Promise<void> {
  if (!running || running.child.exitCode !== null) return;
  const exited = new Promise((r) => running.child.once('exit', r));
  running.child.kill('SIGTERM');
  await exited;
}

describe('sample app', () => {
  let service: TestService;
  let tenant: Tenant;
  let stateDir: string;
  let app: Running | undefined;
  let appUrl: string;
  let env: Record<string, string>;

  before(async () => {
    service = await startTestService('pglite', EMAIL_LOGIN_ENV);
    tenant = await createTenant(service, 'sample-app');
    stateDir = mkdtempSync(join(tmpdir(), 'atrium-sample-'));
    const port = await freePort();
    appUrl = `http://127.0.0.1:${port}`;
    env = { ATRIUM_URL: service.url, ATRIUM_API_KEY: tenant.apiKey, SAMPLE_APP_PORT: String(port), SAMPLE_APP_STATE: join(stateDir, 'client.json') };
  });
  after(async () => {
    await stopApp(app);
    await service?.stop();
    if (stateDir) rmSync(stateDir, { recursive: true, force: true });
  });

  test('boots, registers its OAuth client and its open room, and keeps the secret in a 0600 file', async () => {
    app = await startApp(env);
    const clientId = /Created OAuth client (\S+) in project (\S+)/.exec(app.output);
    assert.ok(clientId, app.output);
    assert.equal(clientId[2], tenant.projectId, 'the project is found from the API key');

    const stored = JSON.parse(readFileSync(env.SAMPLE_APP_STATE!, 'utf8'));
    assert.equal(stored.client_id, clientId[1]);
    assert.ok(stored.client_secret.length >= 40);
    assert.equal(statSync(env.SAMPLE_APP_STATE!).mode & 0o777, 0o600);

    const client = await call(service, 'GET', `/accounts/projects/${tenant.projectId}/oauth/clients/${clientId[1]}`, { token: tenant.apiKey });
    assert.equal(client.status, 200);
    assert.deepEqual(client.body.redirect_uris, [`${appUrl}/callback`]);
    assert.deepEqual(client.body.grant_types, ['authorization_code']);
    assert.equal(client.body.scope, 'profile:read');
    assert.equal((await call(service, 'GET', `/accounts/projects/${tenant.projectId}/rooms/lobby`, { token: tenant.apiKey })).status, 200);

    const home = await fetch(appUrl);
    assert.equal(home.status, 200);
    const html = await home.text();
    assert.match(html, /href="\/login"/);
    assert.ok(html.includes(clientId[1]));
    assert.equal((await fetch(`${appUrl}/api/rooms`)).status, 401, 'rooms only after sign-in');
  });

  test('the login link goes to /oauth/authorize with PKCE S256, state and the registered callback', async () => {
    const response = await fetch(`${appUrl}/login`, { redirect: 'manual' });
    assert.equal(response.status, 303);
    const location = new URL(response.headers.get('location')!);
    assert.equal(`${location.origin}${location.pathname}`, `${service.url}/oauth/authorize`);
    const params = location.searchParams;
    assert.equal(params.get('response_type'), 'code');
    assert.equal(params.get('client_id'), JSON.parse(readFileSync(env.SAMPLE_APP_STATE!, 'utf8')).client_id);
    assert.equal(params.get('redirect_uri'), `${appUrl}/callback`);
    assert.equal(params.get('code_challenge_method'), 'S256');
    assert.match(params.get('code_challenge')!, /^[A-Za-z0-9_-]{43}$/);
    assert.ok((params.get('state') ?? '').length >= 16);
    assert.equal(params.get('scope'), 'profile:read');
    assert.match(response.headers.get('set-cookie') ?? '', /sample_login=[^;]+;.*HttpOnly/);

    const again = new URL((await fetch(`${appUrl}/login`, { redirect: 'manual' })).headers.get('location')!);
    assert.notEqual(again.searchParams.get('code_challenge'), params.get('code_challenge'), 'a fresh verifier per sign-in');
    assert.notEqual(again.searchParams.get('state'), params.get('state'));

    // A callback that this app did not start is refused, and no session results.
    const forged = await fetch(`${appUrl}/callback?code=abc&state=${params.get('state')}`, { redirect: 'manual' });
    assert.equal(forged.status, 400);
    assert.doesNotMatch(forged.headers.get('set-cookie') ?? '', /sample_session=[^;]/);
  });

  /** Sign-in through the app: its login link, Atrium's sign-in and consent forms, its callback. */
  async function signInThroughApp(email: string, password: string): Promise<FormBrowser> {
    const browser = new FormBrowser(appUrl);
    const callbackPrefix = `${appUrl}/callback`;
    const signIn = await browser.go('GET', `${appUrl}/login`, undefined, callbackPrefix);
    assert.match(signIn.html, /id="password-form"/, 'Atrium sign-in page');
    const consent = await browser.submit(signIn, '/password', { email, password }, callbackPrefix);
    assert.match(consent.html, /Atrium sample app/, 'the consent page names the client');
    const back = await browser.submit(consent, '/consent', { decision: 'allow' }, callbackPrefix);
    assert.ok(back.redirectedTo, 'Atrium sends the browser back to the app');
    const home = await browser.go('GET', back.redirectedTo);
    assert.equal(home.status, 200, home.html.slice(0, 500));
    return browser;
  }

  test('steps 2–5: a project admin signs in, gets every room, and tokens minted for them', async () => {
    await call(service, 'POST', `/accounts/projects/${tenant.projectId}/rooms`, { token: tenant.apiKey, json: { name: 'staff-room' } });
    const browser = await signInThroughApp(tenant.email, tenant.password);
    const page = await browser.go('GET', `${appUrl}/`);
    assert.ok(page.html.includes(tenant.email));
    assert.match(page.html, /project role: <code>admin<\/code>/);
    const rooms = JSON.parse((await browser.go('GET', `${appUrl}/api/rooms`)).html);
    assert.equal(rooms.user.id, tenant.userId);
    assert.deepEqual(rooms.rooms.map((r: { room_name: string }) => r.room_name).sort(), ['lobby', 'staff-room']);
    for (const room of rooms.rooms) {
      assert.equal(room.room_url, `${service.url.replace('http', 'ws')}/rooms/${room.room_name}`);
      const claims = await call(service, 'POST', '/api/participant-token/validate', { json: { token: room.jwt } });
      assert.equal(claims.status, 200);
      assert.equal(claims.body.name, tenant.email, 'the participant is the signed-in user');
      assert.equal(claims.body.sub, tenant.projectId);
      assert.deepEqual(claims.body.grants.find((g: { name: string }) => g.name === 'room'), { name: 'room', scope: room.room_name });
    }
    const out = await browser.go('GET', `${appUrl}/logout`);
    assert.match(out.html, /Sign in with Atrium/);
  });

  test('a user outside the project gets only the open rooms', async () => {
    const outsider = await createUserWithToken(service, 'sample-outsider');
    const browser = await signInThroughApp(outsider.email, 'correct horse battery staple');
    const rooms = JSON.parse((await browser.go('GET', `${appUrl}/api/rooms`)).html);
    assert.equal(rooms.user.role, 'none');
    assert.deepEqual(rooms.rooms.map((r: { room_name: string }) => r.room_name), ['lobby']);
  });

  test('a restart reuses the stored client', async () => {
    await stopApp(app);
    app = await startApp(env);
    const stored = JSON.parse(readFileSync(env.SAMPLE_APP_STATE!, 'utf8'));
    assert.match(app.output, new RegExp(`Using OAuth client ${stored.client_id}`));
    const listed = await call(service, 'GET', `/accounts/projects/${tenant.projectId}/oauth/clients`, { token: tenant.apiKey });
    assert.equal(listed.body.total, 1, 'no second client');
  });

  test('it refuses to start without an API key', async () => {
    await assert.rejects(startApp({ ATRIUM_URL: service.url, SAMPLE_APP_PORT: '1' }), /ATRIUM_API_KEY is required/);
  });
});

test('room policy: admins and developers get every room, others the open rooms and rooms naming them', () => {
  const named = { storage: {} };
  const rooms: Parameters<typeof chooseRooms>[0] = [
    { id: '1', name: 'lobby', permissions: {} },
    { id: '2', name: 'private', permissions: { 'user-a': named } },
    { id: '3', name: 'staff', permissions: {} },
  ];
  const names = (role: string, id = 'user-b') => chooseRooms(rooms, { id, role }, ['lobby']).map((r) => r.name);
  assert.deepEqual(names('admin'), ['lobby', 'private', 'staff']);
  assert.deepEqual(names('developer'), ['lobby', 'private', 'staff']);
  assert.deepEqual(names('member'), ['lobby']);
  assert.deepEqual(names('none'), ['lobby']);
  assert.deepEqual(names('member', 'user-a'), ['lobby', 'private']);
  assert.deepEqual(chooseRooms(rooms, { id: 'user-a', role: 'member' }, []).find((r) => r.name === 'private')?.scope, named);
});
