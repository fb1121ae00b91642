// The top-level help of `atrium` (docs/cli.md is generated from it and the groups' help).
import { GROUPS } from './groups.ts';

const GROUP_LINES = GROUPS.map((g) => `  ${`${g.name} <command>`.padEnd(25)} ${g.summary}`).join('\n');

export const USAGE = `Usage: atrium <command> [options]

Commands:
  serve                     Run the API, OAuth server and workers (what \`npm start\` runs)
  bootstrap                 Create (idempotently) an admin user, a project and a new API key
      --email E --password P --project NAME [--first-name F] [--last-name L] [--json]
  webhooks listen           Receive webhooks locally; print each verified event as a JSON line
      [--port 8080] [--host 127.0.0.1] [--secret S | env ATRIUM_WEBHOOK_SECRET] [--no-verify] [--path /webhook]
  keys rotate               Add a signing key; every instance signs with it within ATRIUM_KEY_REFRESH_SECONDS
  billing verify            Check that every project's wallet equals its ledger's sum (exit 1 if not)
      [--project ID] [--json]
  login                     Sign in through the browser (loopback redirect, PKCE)
      [--server URL] [--no-browser] [--port N: the loopback listener's port, default any free one]
      [--device: with a device code, for machines without a browser]
  whoami                    Show who you are signed in as  [--server URL] [--json]
  token                     Print a fresh access token for scripts  [--server URL]
  logout                    Revoke the sign-in at the server and forget it  [--server URL]
${GROUP_LINES}
  help                      Show this help

serve, bootstrap, keys and billing take their settings from the environment (PORT, HOST, DATABASE_URL,
ATRIUM_DATA_DIR, ATRIUM_PUBLIC_URL…): every one, with its default, is in the Settings section of
README.md. The other commands talk to --server, else ATRIUM_URL, else the one server you are signed
in to, else ATRIUM_PUBLIC_URL, else http://localhost:8000, and keep tokens in
~/.config/atrium/credentials.json (ATRIUM_CONFIG_DIR overrides the directory). ATRIUM_TOKEN (an API
key or personal access token) replaces the stored sign-in for the command groups; ATRIUM_PROJECT
(or --project) chooses their project when you have more than one. Run \`atrium <group> --help\`.`;
