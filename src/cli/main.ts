// The `atrium` command.
import './module-formats.ts'; // first: the commands' code is loaded after it (dynamic imports below)
import { ConfigError, loadConfig } from '../config.ts';
import { DirLockedError } from '../platform/db/dir-lock.ts';
import { GROUPS, runGroup } from './groups.ts';
import { ensureServerEnv } from './server-env.ts';
import { commandUsage, USAGE } from './usage.ts';

type Command = (args: string[]) => Promise<number>;

// Each command's code is loaded only when it runs, so `atrium whoami` does not load the server.
const commands: Record<string, Command> = {
  serve: async () => {
    ensureServerEnv();
    return (await import('./serve.ts')).serve(loadConfig());
  },
  bootstrap: async (args) => (await import('./bootstrap.ts')).bootstrapCommand(args),
  webhooks: async (args) => (await import('./webhooks.ts')).webhooksCommand(args),
  keys: async (args) => (await import('./keys.ts')).keysCommand(args, () => loadConfig()),
  factors: async (args) => (await import('./factors.ts')).factorsCommand(args, () => loadConfig()),
  login: async (args) => (await import('./login.ts')).loginCommand(args),
  whoami: async (args) => (await import('./login.ts')).whoamiCommand(args),
  logout: async (args) => (await import('./login.ts')).logoutCommand(args),
  token: async (args) => (await import('./login.ts')).tokenCommand(args),
  billing: async (args) => (await import('./billing.ts')).billingCommand(args),
  ...Object.fromEntries(GROUPS.filter((g) => g.name !== 'webhooks').map((g) => [g.name, (args: string[]) => runGroup(g, args)])),
  help: async () => {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  },
};

async function main(argv: string[]): Promise<number> {
  const [name = 'help', ...rest] = argv;
  const command = commands[name === '--help' || name === '-h' ? 'help' : name];
  if (!command) {
    process.stderr.write(`Unknown command ${JSON.stringify(name)}.\n\n${USAGE}\n`);
    return 2;
  }
  // A command's own help, before anything runs: `atrium serve --help` must not start a server. The
  // groups (webhooks among them) answer --help themselves, with their commands' options.
  const usage = GROUPS.some((g) => g.name === name) ? undefined : commandUsage(name);
  if (usage && rest.some((arg) => arg === '--help' || arg === '-h')) {
    process.stdout.write(`${usage}\n`);
    return 0;
  }
  try {
    return await command(rest);
  } catch (error) {
    if (error instanceof ConfigError || error instanceof DirLockedError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`atrium: ${(error as Error).message}\n`);
      return 2;
    }
    throw error;
  }
}

process.exitCode = await main(process.argv.slice(2));
