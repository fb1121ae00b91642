// `atrium login` (browser and --device), `whoami` and `logout` as a user runs them: the real
// command in a child process against a live server, with the sign-in pages driven by a
// cookie-keeping fetch "browser".
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import * as oidc from 'openid-client';
import { ATRIUM_CLI_CLIENT_ID } from '../../src/modules/oauth/first-party.ts';
import { EMAIL_LOGIN_ENV, FormBrowser, discover, jwtClaims, oauthError, signInAndConsent } from '../support/oauth.ts';
import { createTenant, forEachEngine, startTestService, type Tenant, type TestService } from '../support/service.ts';

const CLI = resolve(import.meta.dirname, '../../src/cli/main.ts');

interface Run {
  child: ChildProcess;
  stdout: string;
  stderr: string;
  /** Resolves with stdout once it matches. */
  waitFor(pattern: RegExp): Promise<RegExpExecArray>;
  exit: Promise<number>;
}

function atrium(args: string[], env: Record<string, string>): Run {
  const child = spawn(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const run = { child, stdout: '', stderr: '' } as Run;
  const waiters: (() => void)[] = [];
  child.stdout!.on('data', (chunk: Buffer) => {
    run.stdout += chunk.toString();
    for (const check of [...waiters]) check();
  });
  child.stderr!.on('data', (chunk: Buffer) => { run.stderr += chunk.toString(); });
  run.exit = new Promise((resolveExit) => child.once('exit', (code) => resolveExit(code ?? 1)));
  run.waitFor = (pattern) => new Promise((resolveMatch, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${pattern} in output within 20 s:\n${run.stdout}\n${run.stderr}`)), 20_000);
    const check = () => {
      const match = pattern.exec(run.stdout);
      if (!match) return;
      clearTimeout(timer);
      waiters.splice(waiters.indexOf(check), 1);
      resolveMatch(match);
    };
    waiters.push(check);
    check();
    void run.exit.then(() => {
      if (!pattern.test(run.stdout)) {
        clearTimeout(timer);
        reject(new Error(`atrium ${args.join(' ')} exited without ${pattern}:\n${run.stdout}\n${run.stderr}`));
      }
    });
  });
  return run;
}

async function finished(run: Run): Promise<{ code: number; stdout: string; stderr: string }> {
  const code = await run.exit;
  return { code, stdout: run.stdout, stderr: run.stderr };
}

forEachEngine('atrium login', (engine) => {
  let service: TestService;
  let tenant: Tenant;
  let home: string;
  let env: Record<string, string>;
  const running: Run[] = [];

  before(async () => {
    service = await startTestService(engine, { ...EMAIL_LOGIN_ENV, ATRIUM_AUTH_CACHE_SECONDS: '0' });
    tenant = await createTenant(service, 'cli-login');
    home = mkdtempSync(join(tmpdir(), 'atrium-cli-home-'));
    env = { HOME: home, ATRIUM_CONFIG_DIR: join(home, 'atrium-config') };
  });
  after(async () => {
    for (const run of running) if (run.child.exitCode === null) run.child.kill('SIGKILL');
    await service?.stop();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  const cli = (...args: string[]) => {
    const run = atrium(args, env);
    running.push(run);
    return run;
  };
  const credentials = () => JSON.parse(readFileSync(join(env.ATRIUM_CONFIG_DIR!, 'credentials.json'), 'utf8')).servers[service.url];

  test('--device: prints a code, waits for approval in the browser, stores the tokens 0600', async () => {
    const login = cli('login', '--device', '--server', service.url);
    const [, verificationUri] = await login.waitFor(/open\s+(\S+)\s+and enter the code/);
    const [, userCode] = await login.waitFor(/enter the code\s+([A-Z]{4}-[A-Z]{4})/);
    assert.equal(verificationUri, `${service.url}/oauth/device`);

    const browser = new FormBrowser(service.url);
    const entry = await browser.go('GET', verificationUri!);
    const confirm = await browser.submit(entry, '/oauth/device', { user_code: userCode! });
    const signIn = await browser.submit(confirm, '/oauth/device', {});
    const consent = await browser.submit(signIn, '/password', { email: tenant.email, password: tenant.password });
    const done = await browser.submit(consent, '/consent', { decision: 'allow' });
    assert.match(done.html, /Device connected/);

    const result = await finished(login);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, new RegExp(`Signed in to ${service.url} as ${tenant.email}`));
    const file = join(env.ATRIUM_CONFIG_DIR!, 'credentials.json');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    const stored = credentials();
    assert.equal(stored.client_id, ATRIUM_CLI_CLIENT_ID);
    assert.ok(stored.refresh_token);
    assert.equal(jwtClaims(stored.access_token).sub, tenant.userId);

    const whoami = await finished(cli('whoami', '--server', service.url, '--json'));
    assert.equal(whoami.code, 0, whoami.stderr);
    const me = JSON.parse(whoami.stdout);
    assert.equal(me.email, tenant.email);
    assert.equal(me.id, tenant.userId);
    assert.equal(me.server, service.url);
  });

  test('whoami refreshes an expired access token; the rotated refresh token replaces the old one', async () => {
    const file = join(env.ATRIUM_CONFIG_DIR!, 'credentials.json');
    const data = JSON.parse(readFileSync(file, 'utf8'));
    const before = data.servers[service.url];
    data.servers[service.url] = { ...before, expires_at: Math.floor(Date.now() / 1000) - 5 };
    writeFileSync(file, JSON.stringify(data), { mode: 0o600 });

    const whoami = await finished(cli('whoami', '--server', service.url));
    assert.equal(whoami.code, 0, whoami.stderr);
    assert.match(whoami.stdout, new RegExp(tenant.email));
    const after = credentials();
    assert.notEqual(after.access_token, before.access_token);
    assert.notEqual(after.refresh_token, before.refresh_token, 'rotated');
    assert.ok(after.expires_at > Math.floor(Date.now() / 1000));
  });

  test('logout revokes the sign-in at the server and forgets it', async () => {
    const stored = credentials();
    const logout = await finished(cli('logout', '--server', service.url));
    assert.equal(logout.code, 0, logout.stderr);
    assert.match(logout.stdout, /Signed out/);
    assert.equal(credentials(), undefined);
    // The revoked refresh token no longer works at the token endpoint.
    const config = await discover(service, { clientId: ATRIUM_CLI_CLIENT_ID, clientSecret: '' });
    await assert.rejects(oidc.refreshTokenGrant(config, stored.refresh_token), (error) => oauthError(error) === 'invalid_grant');

    const whoami = await finished(cli('whoami', '--server', service.url));
    assert.equal(whoami.code, 1);
    assert.match(whoami.stderr, /Not signed in .*atrium login/);
    const again = await finished(cli('logout', '--server', service.url));
    assert.equal(again.code, 0);
    assert.match(again.stdout, /Not signed in/);
  });

  test('browser sign-in: loopback redirect with PKCE S256 and state', async () => {
    const login = cli('login', '--no-browser', '--server', service.url);
    const [, printed] = await login.waitFor(/sign in:\s+(\S+)/);
    const url = new URL(printed!);
    assert.equal(`${url.origin}${url.pathname}`, `${service.url}/oauth/authorize`);
    assert.equal(url.searchParams.get('client_id'), ATRIUM_CLI_CLIENT_ID);
    assert.equal(url.searchParams.get('code_challenge_method'), 'S256');
    assert.match(url.searchParams.get('code_challenge')!, /^[A-Za-z0-9_-]{43}$/);
    const redirectUri = url.searchParams.get('redirect_uri')!;
    assert.match(redirectUri, /^http:\/\/127\.0\.0\.1:\d+\/callback$/);

    // Something else on this machine answering the loopback listener is ignored.
    const stray = await fetch(`${redirectUri}?code=forged&state=wrong`);
    assert.equal(stray.status, 400);

    const callback = await signInAndConsent(new FormBrowser(service.url), { url, verifier: '', state: '', nonce: '' }, redirectUri, tenant.email, tenant.password);
    const landing = await fetch(callback);
    assert.equal(landing.status, 200);
    assert.match(await landing.text(), /Signed in to Atrium/);

    const result = await finished(login);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, new RegExp(`as ${tenant.email}`));
    assert.equal(jwtClaims(credentials().access_token).sub, tenant.userId);
  });

  test('a server that is not Atrium, or bad arguments, fail with a message', async () => {
    const unreachable = await finished(cli('login', '--device', '--server', 'http://127.0.0.1:9'));
    assert.equal(unreachable.code, 1);
    assert.match(unreachable.stderr, /Cannot read the OAuth configuration of http:\/\/127\.0\.0\.1:9/);
    const bad = await finished(cli('login', '--bogus'));
    assert.equal(bad.code, 2);
  });
});
