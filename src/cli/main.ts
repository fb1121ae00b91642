// The `atrium` command.
import { ConfigError, loadConfig } from '../config.ts';
import { DirLockedError } from '../platform/db/dir-lock.ts';

const USAGE = `Usage: atrium <command> [options]

Commands:
  serve                     Run the API, OAuth server and workers (what \`npm start\` runs)
  bootstrap                 Create (idempotently) an admin user, a project and a new API key
      --email E --password P --project NAME [--first-name F] [--last-name L] [--json]
  webhooks listen           Receive webhooks locally; print each verified event as a JSON line
      [--port 8080] [--host 127.0.0.1] [--secret S | env ATRIUM_WEBHOOK_SECRET] [--no-verify] [--path /webhook]
  login                     Sign in through the browser (loopback redirect, PKCE)
      [--server URL] [--no-browser] [--device: with a device code, for machines without a browser]
  whoami                    Show who you are signed in as  [--server URL] [--json]
  logout                    Revoke the sign-in at the server and forget it  [--server URL]
  billing verify            Check that every project's wallet equals its ledger's sum (exit 1 if not)
      [--project ID] [--json]
  help                      Show this help

serve, bootstrap and billing take their settings from the environment (PORT, HOST, DATABASE_URL,
ATRIUM_DATA_DIR, ATRIUM_PUBLIC_URL…): every one, with its default, is in the Settings section of
README.md. login/whoami/logout talk to --server, else ATRIUM_PUBLIC_URL, else http://localhost:8000,
and keep tokens in ~/.config/atrium/credentials.json (ATRIUM_CONFIG_DIR overrides the directory).`;

type Command = (args: string[]) => Promise<number>;

// Each command's code is loaded only when it runs, so `atrium whoami` does not load the server.
const commands: Record<string, Command> = {
  serve: async () => (await import('./serve.ts')).serve(loadConfig()),
  bootstrap: async (args) => (await import('./bootstrap.ts')).bootstrapCommand(args),
  webhooks: async (args) => (await import('./webhooks.ts')).webhooksCommand(args),
  login: async (args) => (await import('./login.ts')).loginCommand(args),
  whoami: async (args) => (await import('./login.ts')).whoamiCommand(args),
  logout: async (args) => (await import('./login.ts')).logoutCommand(args),
  billing: async (args) => (await import('./billing.ts')).billingCommand(args),
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
    if (error instanceof ConfigError || error instanceof DirLockedError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`atrium: ${(error as Error).message}\n`);
      return 2;
    }
    throw error;
  }
}

process.exitCode = await main(process.argv.slice(2));
