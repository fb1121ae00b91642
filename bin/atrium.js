#!/usr/bin/env node
// Runs the CLI on the Node 24 runtime that `npm install` brings (the `node` dependency), so
// `npx atrium …` works on machines whose own node is older.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SERVE_NODE_FLAGS } from './serve-flags.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
let node = process.execPath;
if (Number(process.versions.node.split('.')[0]) < 24) {
  node = join(dirname(require.resolve('node/package.json')), 'bin', 'node');
}
// The server's node flags go to `serve` only. The other commands are short-lived: idle memory does
// not matter there, start-up does, and Node's compile cache (in the system's temporary directory
// unless NODE_COMPILE_CACHE names one) starts a command about a quarter sooner once its modules have
// been compiled (0.57 s to 0.43 s). The server starts no sooner with it.
const serve = process.argv[2] === 'serve';
const flags = serve ? SERVE_NODE_FLAGS : [];
const env = serve ? process.env : { NODE_COMPILE_CACHE: join(tmpdir(), 'node-compile-cache'), ...process.env };
const child = spawn(node, [...flags, join(root, 'src', 'cli', 'main.ts'), ...process.argv.slice(2)], { stdio: 'inherit', env });
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
