// The `atrium` command.
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config.ts';
import { DirLockedError } from '../platform/db/dir-lock.ts';
import { bootstrap, BootstrapError } from './bootstrap.ts';
import { serve } from './serve.ts';

const USAGE = `Usage: atrium <command> [options]

Commands:
  serve                     Run the API, OAuth server and workers (what \`npm start\` runs)
  bootstrap                 Create (idempotently) an admin user, a project and a new API key
      --email E --password P --project NAME [--first-name F] [--last-name L] [--json]
  help                      Show this help

Settings come from the environment: PORT (8000), ATRIUM_PUBLIC_URL, ATRIUM_DATA_DIR (./data),
DATABASE_URL (PostgreSQL; embedded PGlite when unset), ATRIUM_SECRET_KEY, ATRIUM_LOG_LEVEL.
See README.md for all of them.`;

type Command = (args: string[]) => Promise<number>;

const commands: Record<string, Command> = {
  serve: async () => serve(loadConfig()),
  bootstrap: async (args) => {
    const { values } = parseArgs({
      args,
      options: {
        email: { type: 'string' },
        password: { type: 'string' },
        project: { type: 'string' },
        'first-name': { type: 'string' },
        'last-name': { type: 'string' },
        json: { type: 'boolean', default: false },
      },
      strict: true,
    });
    if (!values.email || !values.password || !values.project) {
      process.stderr.write('bootstrap needs --email, --password and --project\n');
      return 2;
    }
    const result = await bootstrap(loadConfig(), {
      email: values.email,
      password: values.password,
      project: values.project,
      firstName: values['first-name'],
      lastName: values['last-name'],
    });
    if (values.json) {
      process.stdout.write(`${JSON.stringify(result)}\n`);
    } else {
      process.stdout.write(`Admin user:  ${values.email} (${result.user_id})\nProject:     ${values.project} (${result.project_id})\nAPI key:     ${result.api_key}\nUser token:  ${result.user_token}\nStore both credentials now: they are not shown again.\n`);
    }
    return 0;
  },
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
  try {
    return await command(rest);
  } catch (error) {
    if (error instanceof ConfigError || error instanceof DirLockedError || error instanceof BootstrapError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`atrium: ${(error as Error).message}\n`);
      return 2;
    }
    throw error;
  }
}

process.exitCode = await main(process.argv.slice(2));
