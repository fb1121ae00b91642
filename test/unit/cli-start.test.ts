// `atrium` starts with the command table and its help only: a command's code, the settings, the
// API client and the sign-in's OpenID client are loaded when a command that needs them runs.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test } from 'node:test';

const ROOT = resolve(import.meta.dirname, '../..');

/** The modules of this repository and the packages that `atrium <args>` loaded. */
function loadedBy(args: string[], env: Record<string, string> = {}): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'atrium-start-'));
  try {
    const list = join(dir, 'loaded.json');
    spawnSync(process.execPath, ['--import', join(ROOT, 'test/support/loaded-modules.ts'), join(ROOT, 'src/cli/main.ts'), ...args], {
      env: { PATH: process.env.PATH ?? '', HOME: dir, ATRIUM_CONFIG_DIR: dir, ATRIUM_LOADED_MODULES: list, ...env }, encoding: 'utf8', timeout: 30_000,
    });
    return (JSON.parse(readFileSync(list, 'utf8')) as string[]).filter((url) => url.startsWith('file:')).map((url) => url.slice(`file://${ROOT}/`.length));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const HEAVY = [/^src\/config\.ts$/, /^src\/modules\//, /^src\/platform\/settings\//, /^src\/api-client\//, /node_modules\/openapi-fetch\//, /node_modules\/openid-client\//, /node_modules\/typebox\//];

test('help, a group\'s help and a mistyped command load no command code, settings or API client', () => {
  for (const args of [['help'], ['rooms', '--help'], ['roms']]) {
    const loaded = loadedBy(args);
    assert.ok(loaded.includes('src/cli/groups.ts'), `${args.join(' ')} reads the command table`);
    assert.deepEqual(loaded.filter((file) => file.startsWith('src/cli/commands/') || HEAVY.some((heavy) => heavy.test(file))), [], args.join(' '));
  }
});

test('a group command loads its own group\'s code and the API client, nothing of the others', () => {
  const loaded = loadedBy(['rooms', 'list', '--server', 'http://127.0.0.1:9', '--project', '00000000-0000-4000-8000-000000000000'], { ATRIUM_TOKEN: 'not-a-token' });
  assert.deepEqual(loaded.filter((file) => file.startsWith('src/cli/commands/')), ['src/cli/commands/rooms.ts']);
  assert.ok(loaded.some((file) => file.startsWith('src/api-client/')), 'the API client');
  assert.deepEqual(loaded.filter((file) => /^src\/config\.ts$|^src\/modules\/|node_modules\/openid-client\//.test(file)), [], 'neither the settings nor the OpenID client (a fixed token needs no refresh)');
});
