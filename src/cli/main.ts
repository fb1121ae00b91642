// The `atrium` command. It starts with only this file, the command table (groups.ts) and the help
// text loaded: each command's code, the settings and the API client are imported when a command
// that needs them runs, so `atrium --help` or a mistyped command answers at once.
import './module-formats.ts'; // first: the commands' code is loaded after it (dynamic imports below)
import { GROUPS, nearest, runGroup } from './groups.ts';
import { commandUsage, USAGE } from './usage.ts';

type Command = (args: string[]) => Promise<number>;

const loadConfig = async () => (await import('../config.ts')).loadConfig();

const commands: Record<string, Command> = {
  serve: async () => {
    (await import('./server-env.ts')).ensureServerEnv();
    return (await import('./serve.ts')).serve(await loadConfig());
  },
  bootstrap: async (args) => (await import('./bootstrap.ts')).bootstrapCommand(args),
  keys: async (args) => {
    const config = await import('../config.ts');
    return (await import('./keys.ts')).keysCommand(args, () => config.loadConfig());
  },
  factors: async (args) => {
    const config = await import('../config.ts');
    return (await import('./factors.ts')).factorsCommand(args, () => config.loadConfig());
  },
  login: async (args) => (await import('./login.ts')).loginCommand(args),
  whoami: async (args) => (await import('./login.ts')).whoamiCommand(args),
  logout: async (args) => (await import('./login.ts')).logoutCommand(args),
  token: async (args) => (await import('./login.ts')).tokenCommand(args),
  ...Object.fromEntries(GROUPS.map((g) => [g.name, (args: string[]) => runGroup(g, args)])),
  // `webhooks listen` and `billing verify` are commands of their own; the rest of each is its group.
  webhooks: async (args) => (await import('./webhooks.ts')).webhooksCommand(args),
  billing: async (args) => (args[0] === 'verify' ? (await import('./billing.ts')).billingCommand(args) : runGroup(GROUPS.find((g) => g.name === 'billing')!, args)),
  help: async () => {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  },
};

/** Settings that cannot be used, a data directory another process holds, bad arguments: a message, not a stack. */
async function isUsageFailure(error: unknown): Promise<boolean> {
  if ((error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) return true;
  const [{ ConfigError }, { DirLockedError }] = await Promise.all([import('../config.ts'), import('../platform/db/dir-lock.ts')]);
  return error instanceof ConfigError || error instanceof DirLockedError;
}

async function main(argv: string[]): Promise<number> {
  const [name = 'help', ...rest] = argv;
  const command = commands[name === '--help' || name === '-h' ? 'help' : name];
  if (!command) {
    const guess = nearest(name, Object.keys(commands));
    process.stderr.write(`atrium: unknown command ${JSON.stringify(name)}.${guess ? ` Did you mean \`atrium ${guess}\`?` : ''}\nRun \`atrium help\` for the commands.\n`);
    return 2;
  }
  // A command's own help, before anything runs: `atrium serve --help` must not start a server. The
  // groups (webhooks and billing among them) answer --help themselves, with their commands' options.
  const usage = GROUPS.some((g) => g.name === name) && !(name === 'billing' && rest[0] === 'verify') ? undefined : commandUsage(name);
  if (usage && rest.some((arg) => arg === '--help' || arg === '-h')) {
    process.stdout.write(`${usage}\n`);
    return 0;
  }
  try {
    return await command(rest);
  } catch (error) {
    const { DatabaseUnreachableError } = await import('../platform/db/engine.ts');
    if (error instanceof DatabaseUnreachableError) {
      process.stderr.write(`atrium: ${error.message}\n`);
      return 1;
    }
    if (!(await isUsageFailure(error))) throw error;
    process.stderr.write(`atrium: ${(error as Error).message}\n`);
    return 2;
  }
}

process.exitCode = await main(process.argv.slice(2));
