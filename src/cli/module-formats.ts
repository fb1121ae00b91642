// Node's ESM loader learns whether a .js file is an ES module or CommonJS from the nearest
// package.json, and re-reads that file's fields for every module it loads. For a package with a
// large package.json that is costly: drizzle-orm's (179 KB, mostly its exports map) is parsed again
// for each of its hundreds of files, ~230 MB of memory and ~0.7 s of start-up. This hook answers
// relative imports between files of an installed package itself, with the package's type read once.
import { readFileSync } from 'node:fs';
import { registerHooks } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const typeOfFolder = new Map<string, 'module' | 'commonjs'>();

/** The module type of a .js file: the `type` of the nearest package.json, as Node decides it. */
function typeOf(file: string): 'module' | 'commonjs' {
  const folder = dirname(file);
  let type = typeOfFolder.get(folder);
  if (type) return type;
  try {
    const manifest = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')) as { type?: string };
    type = manifest.type === 'module' ? 'module' : 'commonjs';
  } catch {
    type = folder === dirname(folder) ? 'commonjs' : typeOf(folder);
  }
  typeOfFolder.set(folder, type);
  return type;
}

registerHooks({
  resolve(specifier, context, nextResolve) {
    const parent = context.parentURL;
    if (!parent?.startsWith('file:') || !parent.includes('/node_modules/') || !/^\.\.?\//.test(specifier) || !specifier.endsWith('.js')) {
      return nextResolve(specifier, context);
    }
    const url = new URL(specifier, parent);
    return { url: url.href, format: typeOf(fileURLToPath(url)), shortCircuit: true };
  },
});
