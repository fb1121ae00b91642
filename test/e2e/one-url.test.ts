// One URL everywhere: a client that reaches Atrium under another name than its public URL (the
// OAuth issuer) is told both values and the setting that fixes it, by the CLI and the sample app.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import * as oidc from 'openid-client';
import { issuerMismatch as sampleAppIssuerMismatch } from '../../examples/sample-app/server.ts';
import { issuerMismatch } from '../../src/cli/login.ts';
import { startTestService, type TestService } from '../support/service.ts';

const CLI = resolve(import.meta.dirname, '../../src/cli/main.ts');

let service: TestService;
let home: string;
let issuer: string;
let otherName: string;

before(async () => {
  service = await startTestService('pglite');
  issuer = service.ctx.config.publicUrl;
  // The same socket under another name: the test service's public URL is http://127.0.0.1:PORT.
  otherName = issuer.replace('127.0.0.1', 'localhost');
  assert.notEqual(otherName, issuer);
  home = mkdtempSync(join(tmpdir(), 'atrium-one-url-'));
});
after(async () => {
  await service?.stop();
  if (home) rmSync(home, { recursive: true, force: true });
});

function atrium(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH ?? '', HOME: home, ATRIUM_CONFIG_DIR: join(home, 'cfg'), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => { stdout += d.toString(); });
  child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
  return new Promise((r) => child.once('close', (code) => r({ code: code ?? 1, stdout, stderr })));
}

test('atrium login under another name names the expected and received issuer and the fixes', async () => {
  const result = await atrium(['login', '--device', '--server', otherName]);
  assert.equal(result.code, 1);
  assert.equal(result.stdout, '');
  assert.ok(result.stderr.includes(`expected ${otherName}`), result.stderr);
  assert.ok(result.stderr.includes(`received ${issuer}`), result.stderr);
  assert.ok(result.stderr.includes(`--server ${issuer}`), result.stderr);
  assert.ok(result.stderr.includes(`ATRIUM_PUBLIC_URL=${otherName}`), result.stderr);
  assert.doesNotMatch(result.stderr, /discovered metadata issuer does not match/);
});

test('the right name signs in as far as the device code (no mismatch)', async () => {
  const child = spawn(process.execPath, [CLI, 'login', '--device', '--server', issuer], { env: { PATH: process.env.PATH ?? '', HOME: home, ATRIUM_CONFIG_DIR: join(home, 'cfg') }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  await new Promise<void>((r, reject) => {
    const timer = setTimeout(() => reject(new Error(`no device code: ${stdout}`)), 20_000);
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      if (/enter the code/.test(stdout)) {
        clearTimeout(timer);
        r();
      }
    });
  });
  child.kill('SIGKILL');
});

test('the sample app and the CLI explain a real openid-client discovery mismatch', async () => {
  const error = await oidc.discovery(new URL(otherName), 'x', undefined, oidc.None(), { execute: [oidc.allowInsecureRequests] }).then(
    () => assert.fail('discovery under another name must fail'),
    (e: unknown) => e,
  );
  const app = sampleAppIssuerMismatch(error) ?? assert.fail("no mismatch message");
  assert.ok(app?.includes(`expected ${otherName}`) && app.includes(`received ${issuer}`), app);
  assert.ok(app?.includes(`ATRIUM_URL=${issuer}`) && app.includes(`ATRIUM_PUBLIC_URL=${otherName}`), app);
  assert.ok(issuerMismatch(error)?.includes(`received ${issuer}`));
  // Any other failure is not called a mismatch.
  assert.equal(issuerMismatch(new Error('connect ECONNREFUSED')), undefined);
  assert.equal(sampleAppIssuerMismatch(new Error('connect ECONNREFUSED')), undefined);
});
