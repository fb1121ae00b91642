// Preloaded with `node --import` into a process under test: writes every module the process loaded
// to the file named by ATRIUM_LOADED_MODULES when it exits, to check what a command loads.
import { writeFileSync } from 'node:fs';
import { registerHooks } from 'node:module';

const loaded: string[] = [];
registerHooks({
  load(url, context, nextLoad) {
    loaded.push(url);
    return nextLoad(url, context);
  },
});
process.on('exit', () => writeFileSync(process.env.ATRIUM_LOADED_MODULES!, JSON.stringify(loaded)));
