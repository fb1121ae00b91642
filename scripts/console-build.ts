// Builds the web console (console/ → console/dist) when the build is missing or stale: the hash of
// its sources, the shared API client and the lockfile is kept beside the build and compared. Run by
// `npm install` (prepare), `npm start` and `npm test`, so neither has to remember; without Vite
// (an install without dev dependencies) an existing build is kept as it is. Each asset is written
// compressed beside itself (`.br`, `.gz`), once, at the highest levels: `atrium serve` sends those
// to browsers that accept them instead of compressing on every request.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { extname, join, relative, resolve } from 'node:path';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';

const root = resolve(import.meta.dirname, '..');
const CONSOLE = join(root, 'console');
const DIST = join(CONSOLE, 'dist');
const STAMP = join(DIST, '.source-hash');
const SOURCES = [CONSOLE, join(root, 'src', 'api-client'), join(root, 'package-lock.json')];

function files(path: string): string[] {
  if (!existsSync(path)) return [];
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path, { withFileTypes: true })
    .filter((entry) => !['dist', 'node_modules', 'openapi.json'].includes(entry.name) && !entry.name.startsWith('.'))
    .flatMap((entry) => files(join(path, entry.name)));
}

/** The hash of everything the build is made from. */
export function sourceHash(): string {
  const hash = createHash('sha256');
  for (const file of SOURCES.flatMap(files).sort()) hash.update(`${relative(root, file)}\0`).update(readFileSync(file)).update('\0');
  return hash.digest('hex');
}

export function consoleIsCurrent(): boolean {
  return existsSync(STAMP) && readFileSync(STAMP, 'utf8') === sourceHash();
}

const COMPRESSIBLE = new Set(['.js', '.css', '.svg', '.json', '.html']);
const brotli = promisify(brotliCompress);
const gzipped = promisify(gzip);

/** Writes `<file>.br` and `<file>.gz` beside each text asset, where they are smaller. */
async function precompress(folder: string): Promise<void> {
  const assets = readdirSync(folder).filter((name) => COMPRESSIBLE.has(extname(name))).map((name) => join(folder, name));
  await Promise.all(assets.map(async (file) => {
    const body = await readFile(file);
    const [br, gz] = await Promise.all([
      brotli(body, { params: { [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } }),
      gzipped(body, { level: constants.Z_BEST_COMPRESSION }),
    ]);
    if (br.length < body.length) await writeFile(`${file}.br`, br);
    if (gz.length < body.length) await writeFile(`${file}.gz`, gz);
  }));
}

/** Builds the console unless it is current; says which. */
export async function ensureConsoleBuilt(log: (line: string) => void = (line) => process.stdout.write(`${line}\n`)): Promise<void> {
  if (consoleIsCurrent()) return;
  let vite: typeof import('vite');
  try {
    vite = await import('vite');
  } catch {
    log(existsSync(join(DIST, 'index.html'))
      ? 'console: sources changed but Vite is not installed (npm install without dev dependencies); keeping the existing build'
      : 'console: not built and Vite is not installed; run `npm install` to build it');
    return;
  }
  const started = performance.now();
  const hash = sourceHash();
  await vite.build({ configFile: join(CONSOLE, 'vite.config.ts'), logLevel: 'warn' });
  await precompress(join(DIST, 'assets'));
  writeFileSync(STAMP, hash);
  log(`console: built into ${relative(root, DIST)} in ${Math.round(performance.now() - started)} ms`);
}

if (import.meta.main) await ensureConsoleBuilt();
