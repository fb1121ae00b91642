// The top-level help of `atrium` (docs/cli.md is generated from it and the groups' help).
import { GROUPS } from './groups.ts';

const GROUP_LINES = GROUPS.map((g) => `  ${`${g.name} <command>`.padEnd(26)} ${g.summary}`).join('\n');

/** The commands that are not groups: what each does and its options, one line of options each. */
const COMMANDS: readonly { name: string; summary: string; options: readonly string[]; details?: string }[] = [
  { name: 'serve', summary: 'Run the API, OAuth server and workers (what `npm start` runs)', options: [] },
  {
    name: 'bootstrap', summary: 'Create (idempotently) an admin user, a project and a new API key',
    options: ['--email E --password P --project NAME [--first-name F] [--last-name L] [--json]'],
  },
  {
    name: 'webhooks listen', summary: 'Receive webhooks locally; print each verified event as a JSON line',
    options: ['[--port 8080] [--host 127.0.0.1] [--secret S | env ATRIUM_WEBHOOK_SECRET] [--no-verify] [--path /webhook]'],
  },
  {
    name: 'keys rotate', summary: 'Add a signing key; every instance signs with it within ATRIUM_KEY_REFRESH_SECONDS', options: [],
    details: `The key signs participant tokens, OAuth tokens, room-server and repository signatures. Instances on
the same database verify tokens signed with it at once; the old key stays in the JWKS until
ATRIUM_KEY_RETIRE_AFTER_DAYS after the rotation. Needs the same settings as serve (DATABASE_URL,
ATRIUM_SECRET_KEY).`,
  },
  {
    name: 'keys reencrypt', summary: 'Encrypt what is stored under ATRIUM_SECRET_KEY again, after changing it (exit 1 if a value opens under no key)', options: ['[--dry-run]'],
    details: `Run it with the new key in ATRIUM_SECRET_KEY and the old one in ATRIUM_SECRET_KEY_FALLBACKS, once every
instance has both: it reads every stored secret (secrets, API-key and webhook secrets, signing keys,
authenticator apps, external OAuth client secrets, rendered service specs), seals those the old key
sealed under the new one, and prints what it did as JSON. Running again moves nothing; then remove
ATRIUM_SECRET_KEY_FALLBACKS. --dry-run counts without writing. Needs the same settings as serve
(docs/operations.md, "Changing ATRIUM_SECRET_KEY").`,
  },
  {
    name: 'factors reset', summary: 'Remove every second factor of an account whose owner lost them all; mails the owner', options: ['EMAIL'],
    details: `For a user with neither their authenticator app, a passkey nor a recovery code: afterwards they sign
in with their password alone and add new factors on their account page. Check who is asking first.
Needs the same settings as serve (DATABASE_URL, ATRIUM_SECRET_KEY).`,
  },
  { name: 'billing verify', summary: 'Check that every project\'s wallet equals its ledger\'s sum (exit 1 if not)', options: ['[--project ID] [--json]'] },
  {
    name: 'login', summary: 'Sign in through the browser (loopback redirect, PKCE)',
    options: ['[--server URL] [--no-browser] [--port N: the loopback listener\'s port, default any free one]', '[--device: with a device code, for machines without a browser]'],
  },
  { name: 'whoami', summary: 'Show who you are signed in as', options: ['[--server URL] [--json]'] },
  { name: 'token', summary: 'Print a fresh access token for scripts', options: ['[--server URL]'] },
  { name: 'logout', summary: 'Revoke the sign-in at the server and forget it', options: ['[--server URL]'] },
];

const COMMAND_LINES = COMMANDS.map((c) => [`  ${c.name.padEnd(26)} ${c.summary}`, ...c.options.map((o) => `      ${o}`)].join('\n')).join('\n');

/**
 * `atrium <command> --help` of a command that is not a group: its usage line and what it does; for
 * `webhooks`, `keys` and `billing`, their subcommand's. Undefined for other names.
 */
export function commandUsage(name: string): string | undefined {
  const commands = COMMANDS.filter((c) => c.name === name || c.name.startsWith(`${name} `));
  if (commands.length === 0) return undefined;
  return commands.map((command) => `Usage: atrium ${command.name}${command.options.length > 0 ? ` ${command.options.join(' ')}` : ''}\n\n${command.summary}.${command.details ? `\n${command.details}` : ''}`).join('\n\n');
}

export const USAGE = `Usage: atrium <command> [options]

Commands:
${COMMAND_LINES}
${GROUP_LINES}
  help                       Show this help

serve, bootstrap, keys, factors and billing verify take their settings from the environment (PORT, HOST, DATABASE_URL,
ATRIUM_DATA_DIR, ATRIUM_PUBLIC_URL…): every one, with its default, is in the Settings section of
README.md. The other commands talk to --server, else ATRIUM_URL, else the one server you are signed
in to, else ATRIUM_PUBLIC_URL, else http://localhost:8000, and keep tokens in
~/.config/atrium/credentials.json (ATRIUM_CONFIG_DIR overrides the directory). ATRIUM_TOKEN (an API
key or personal access token) replaces the stored sign-in for the command groups; ATRIUM_PROJECT
(or --project) chooses their project when you have more than one. Run \`atrium <group> --help\`.`;
