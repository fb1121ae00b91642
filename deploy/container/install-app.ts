// Copies what the production image runs from this checkout (after `npm ci`) into the image's app
// directory: package.json (it makes the .ts files ES modules), the server's source, the CLI's
// launcher, the migrations, the built console, and the packages that package-lock.json does not mark
// as development-only (npm's `dev` flag, what `npm prune --omit=dev` removes). Each package is copied
// without its nested node_modules, whose packages have lockfile entries of their own: so nothing
// dev-only, no `.bin` links, and not the headers and docs of the Node distribution that the `node`
// package unpacks under its own node_modules (its bin/node is a hard link to that binary, so it is
// copied as a file). The Containerfile runs this with the checkout's own Node, so a checkout
// installed for another architecture fails the build, not the first start.
//
//   node deploy/container/install-app.ts <app directory>
import { cpSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { consoleIsCurrent } from '../../scripts/console-build.ts';

interface LockedPackage {
  dev?: boolean;
  optional?: boolean;
  link?: boolean;
}

const checkout = resolve(import.meta.dirname, '..', '..');

/** What the checkout lacks for the image, each with what to run. */
function problems(): string[] {
  if (!existsSync(join(checkout, 'node_modules', '.package-lock.json'))) {
    return ['node_modules is missing: run `npm ci` in the checkout before building the image'];
  }
  if (!consoleIsCurrent()) {
    return ['console/dist is missing or older than the console\'s sources: run `npm run console:build` (npm ci does it too)'];
  }
  return [];
}

function install(app: string): void {
  const lock = JSON.parse(readFileSync(join(checkout, 'package-lock.json'), 'utf8')) as { packages?: Record<string, LockedPackage> };
  if (!lock.packages) throw new Error('package-lock.json has no "packages" map: install with npm 7 or later');
  mkdirSync(app, { recursive: true });
  for (const entry of ['package.json', 'package-lock.json', 'src', 'bin', 'migrations', 'console/dist']) {
    cpSync(join(checkout, entry), join(app, entry), { recursive: true, verbatimSymlinks: true });
  }
  let copied = 0;
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (path === '' || entry.dev || entry.link) continue;
    const from = join(checkout, path);
    if (!existsSync(from)) {
      // Optional packages for other platforms: native builds for other CPUs and C libraries.
      if (entry.optional) continue;
      throw new Error(`${path} is in package-lock.json but not installed: run \`npm ci\``);
    }
    const nested = join(from, 'node_modules');
    cpSync(from, join(app, path), { recursive: true, verbatimSymlinks: true, filter: (source) => source !== nested });
    copied++;
  }
  process.stdout.write(`install-app: ${copied} production packages copied into ${app} (of ${Object.keys(lock.packages).length - 1} in package-lock.json)\n`);
}

const [app] = process.argv.slice(2);
if (!app) {
  process.stderr.write('usage: node deploy/container/install-app.ts <app directory>\n');
  process.exit(2);
}
const found = problems();
if (found.length > 0) {
  process.stderr.write(`This checkout cannot be packaged:\n  ${found.join('\n  ')}\n`);
  process.exit(1);
}
install(resolve(app));
