// The CLI's command groups, declared as data: each group says which console pages it covers, each
// command names its arguments and options and says what it does (the help text, the nearest-command
// suggestions and docs/cli.md come from here), and whether it deletes something (asked on a
// terminal, `--yes` skips). A group's code is a module of src/cli/commands/, loaded only when one of
// its commands runs; printing as a table or `--json`, the server, the credential, the project,
// confirmations and error messages are handled once, in `runGroup`.
import { parseArgs, type ParseArgsOptionDescriptor } from 'node:util';
import { closest, distance } from 'fastest-levenshtein';
import type { AppContext } from '../context.ts';
import { openHost } from './host.ts';
import { processIo, UsageError, type CommandIo, type Context, type Implementations, type Option } from './command-kit.ts';

export interface Command {
  name: string;
  summary: string;
  /** Positional arguments, e.g. ['<email>', '[path]']. */
  args?: string[];
  options?: Record<string, Option>;
  /** Commands that act on no project skip the --project option. */
  noProject?: boolean;
  /** A command that deletes: the question asked on a terminal, its arguments by name (`Delete room <name>?`). */
  confirm?: string;
  /**
   * Runs where the server runs, on its database and settings (as `atrium keys rotate` does), not
   * through the API: no --server, no --project.
   */
  serverHost?: true;
}

export interface Group {
  name: string;
  summary: string;
  /** The console's pages (families, console/src/families) the group does from the command line. */
  families: readonly string[];
  /** What `atrium <group>` alone runs, for a group with one obvious command. */
  default?: string;
  commands: readonly Command[];
  code: () => Promise<Implementations>;
}

const ROLES: Option = { type: 'string', multiple: true, description: 'A project role (repeat for more); `atrium members roles` lists them', placeholder: 'ROLE' };
const FILTER: Option = { type: 'string', description: 'Only items whose name contains this text', placeholder: 'TEXT' };
const ROOM: Option = { type: 'string', description: 'A room\'s own, instead of the project\'s', placeholder: 'ROOM' };
const FILE = (what: string): Option => ({ type: 'string', description: `${what} (YAML or JSON; - for standard input)`, placeholder: 'PATH' });
const LIMIT: Option = { type: 'string', description: 'Most rows shown (default 100, at most 1000)', placeholder: 'N' };

const AUDIT_FILTERS: Record<string, Option> = {
  actor: { type: 'string', description: "Only entries of this actor (a user's or API key's id)", placeholder: 'ID' },
  action: { type: 'string', description: 'Only this action (room.create), or every action on a type (room.*)', placeholder: 'ACTION' },
  target: { type: 'string', description: 'Only entries whose target has this id', placeholder: 'ID' },
  outcome: { type: 'string', description: 'Only succeeded, refused or failed entries', placeholder: 'OUTCOME' },
  since: { type: 'string', description: 'Only entries at or after this time (ISO 8601)', placeholder: 'TIME' },
  until: { type: 'string', description: 'Only entries before this time (ISO 8601)', placeholder: 'TIME' },
  limit: { type: 'string', description: 'Most entries, newest first (default 100; 0 for all)', placeholder: 'N' },
  jsonl: { type: 'boolean', description: 'Print one JSON entry per line, for log collectors (docs/audit-log.md)' },
};

const code = <T extends Implementations>(load: () => Promise<{ commands: T }>) => async () => (await load()).commands;

export const GROUPS: readonly Group[] = [
  {
    name: 'projects', summary: 'Projects you can use', families: ['project'],
    code: code(() => import('./commands/projects.ts')),
    commands: [
      { name: 'list', summary: 'List the projects you are a member of', noProject: true },
      { name: 'show', summary: 'Show a project', args: ['[project_id]'] },
      { name: 'create', summary: 'Create a project (you become its admin)', args: ['<name>'], noProject: true },
    ],
  },
  {
    name: 'members', summary: 'Project members and invitations', families: ['members'],
    code: code(() => import('./commands/members.ts')),
    commands: [
      { name: 'list', summary: 'List the members of the project', options: { filter: { ...FILTER, description: 'Only members whose name or email contains this text' } } },
      { name: 'add', summary: 'Add a member by email (a known address joins at once, an unknown one is invited) or by user id', args: ['<email|user_id>'], options: { role: ROLES } },
      { name: 'invite', summary: 'Invite an address to the project (the same as add with an email)', args: ['<email>'], options: { role: ROLES } },
      { name: 'set-roles', summary: "Replace a member's roles", args: ['<user_id>'], options: { role: ROLES } },
      { name: 'remove', summary: 'Remove a member from the project', args: ['<user_id>'], confirm: 'Remove member <user_id> from the project?' },
      { name: 'invitations', summary: 'List pending and expired invitations', options: { filter: { ...FILTER, description: 'Only invitations whose address contains this text' } } },
      { name: 'resend', summary: 'Send an invitation again with a new link (the old one stops working)', args: ['<invitation_id>'] },
      { name: 'revoke', summary: 'Revoke an invitation', args: ['<invitation_id>'], confirm: 'Revoke invitation <invitation_id>?' },
      { name: 'roles', summary: 'Every project role, what it allows and what it is about', noProject: true },
    ],
  },
  {
    name: 'rooms', summary: 'Rooms of the project, and connection info for one', families: ['rooms'],
    code: code(() => import('./commands/rooms.ts')),
    commands: [
      { name: 'list', summary: 'List the rooms', options: { filter: FILTER, limit: LIMIT } },
      { name: 'show', summary: 'Show a room', args: ['<name>'] },
      { name: 'create', summary: 'Create a room (nothing happens if it exists)', args: ['<name>'], options: { metadata: { type: 'string', description: 'Metadata, a JSON object', placeholder: 'JSON' } } },
      { name: 'update', summary: 'Rename a room or replace its metadata', args: ['<name>'], options: { name: { type: 'string', description: 'The new name', placeholder: 'NAME' }, metadata: { type: 'string', description: 'The new metadata, a JSON object', placeholder: 'JSON' } } },
      { name: 'delete', summary: 'Delete a room', args: ['<name>'], confirm: 'Delete room <name>?' },
      { name: 'connect', summary: 'Connection info for a room: the room URL and a participant token for you', args: ['<name>'] },
    ],
  },
  {
    name: 'agents', summary: 'Managed agents of the project', families: ['agents'],
    code: code(() => import('./commands/agents.ts')),
    commands: [
      { name: 'list', summary: 'List the managed agents', options: { filter: FILTER } },
      { name: 'show', summary: 'Show an agent and its configuration', args: ['<name>'] },
      { name: 'create', summary: 'Create an agent from its configuration', args: ['<name>'], options: { file: FILE('The configuration, an object') } },
      { name: 'update', summary: "Replace an agent's configuration", args: ['<name>'], options: { file: FILE('The configuration, an object') } },
      { name: 'delete', summary: 'Delete an agent', args: ['<name>'], confirm: 'Delete agent <name>?' },
      { name: 'connect', summary: 'Connection info for an agent: its room URL and a token', args: ['<name>'] },
    ],
  },
  {
    name: 'sessions', summary: 'Room sessions: running and recent, their events, terminate', families: ['sessions'],
    code: code(() => import('./commands/sessions.ts')),
    commands: [
      { name: 'list', summary: 'List the running sessions (--all: recent ones too), newest first', options: { all: { type: 'boolean', description: 'Ended sessions too' }, filter: { ...FILTER, description: 'Only sessions of rooms whose name contains this text' }, limit: LIMIT } },
      { name: 'show', summary: 'Show a session', args: ['<session_id>'] },
      { name: 'events', summary: "A session's events, oldest first", args: ['<session_id>'], options: { type: { type: 'string', description: 'Only events of this type, e.g. log', placeholder: 'TYPE' }, limit: LIMIT } },
      { name: 'terminate', summary: 'Ask the room server to end a running session', args: ['<session_id>'], confirm: 'Terminate session <session_id>?' },
    ],
  },
  {
    name: 'scheduled-tasks', summary: "Messages sent to a room's queue on a schedule, and their runs", families: ['scheduled-tasks'],
    code: code(() => import('./commands/scheduled-tasks.ts')),
    commands: [
      { name: 'list', summary: 'List the scheduled tasks', options: { filter: { ...FILTER, description: 'Only tasks whose name, queue or room contains this text' } } },
      { name: 'show', summary: 'Show a scheduled task', args: ['<task_id>'] },
      {
        name: 'create', summary: 'Schedule a message to a room\'s queue',
        options: {
          room: { type: 'string', description: 'The room; required', placeholder: 'ROOM' },
          schedule: { type: 'string', description: 'A 5-field cron expression or an interval ("15 minutes"); required', placeholder: 'WHEN' },
          queue: { type: 'string', description: 'The room queue; required', placeholder: 'QUEUE' },
          payload: { type: 'string', description: 'The message, a JSON object (default {})', placeholder: 'JSON' },
          name: { type: 'string', description: 'A name', placeholder: 'NAME' },
          'time-zone': { type: 'string', description: 'The IANA zone the cron expression is read in (default UTC)', placeholder: 'ZONE' },
          once: { type: 'boolean', description: 'Run once, then become inactive' },
          inactive: { type: 'boolean', description: 'Created inactive' },
        },
      },
      { name: 'delete', summary: 'Delete a scheduled task', args: ['<task_id>'], confirm: 'Delete scheduled task <task_id>?' },
      { name: 'runs', summary: "A task's runs, newest first", args: ['<task_id>'], options: { status: { type: 'string', description: 'Only runs in this state: pending, submitting, submitted, retrying or failed', placeholder: 'STATE' }, limit: LIMIT } },
    ],
  },
  {
    name: 'services', summary: "The project's services, and a room's own (--room)", families: ['services'],
    code: code(() => import('./commands/services.ts')),
    commands: [
      { name: 'list', summary: 'List the services', options: { room: ROOM, filter: FILTER } },
      { name: 'show', summary: 'Show a service\'s spec', args: ['<service_id>'], options: { room: ROOM } },
      { name: 'create', summary: 'Create a service from a ServiceSpec or a ServiceTemplate file', options: { file: FILE('The spec or template'), values: { type: 'string', description: "A template's values, a JSON object of strings", placeholder: 'JSON' }, room: ROOM } },
      { name: 'update', summary: 'Replace a service\'s spec', args: ['<service_id>'], options: { file: FILE('The spec or template'), values: { type: 'string', description: "A template's values, a JSON object of strings", placeholder: 'JSON' }, room: ROOM } },
      { name: 'delete', summary: 'Delete a service', args: ['<service_id>'], options: { room: ROOM }, confirm: 'Delete service <service_id>?' },
    ],
  },
  {
    name: 'storage', summary: 'Project storage: list, copy both ways, remove (remote paths start with ":")', families: ['storage'],
    code: code(() => import('./commands/storage.ts')),
    commands: [
      { name: 'ls', summary: 'List a folder of project storage', args: ['[:path]'] },
      { name: 'cp', summary: 'Copy a local file to storage (cp FILE :PATH) or a stored file here (cp :PATH FILE), with a progress bar', args: ['<source>', '<destination>'] },
      { name: 'rm', summary: 'Remove a file from storage', args: ['<:path>'], confirm: 'Remove <:path> from storage?' },
    ],
  },
  {
    name: 'api-keys', summary: 'Project API keys', families: ['api-keys'],
    code: code(() => import('./commands/api-keys.ts')),
    commands: [
      { name: 'list', summary: 'List the API keys (values are never shown again)', options: { filter: { ...FILTER, description: 'Only keys whose name or description contains this text' } } },
      { name: 'create', summary: 'Create an API key and print its value (shown once)', args: ['<name>'], options: { role: { ...ROLES, description: 'A role of the key (repeat for more); default admin' }, description: { type: 'string', description: 'What the key is for', placeholder: 'TEXT' } } },
      { name: 'delete', summary: 'Delete an API key', args: ['<id>'], confirm: 'Delete API key <id>? Requests with it fail from now on.' },
    ],
  },
  {
    name: 'oauth-clients', summary: "OAuth clients that sign the project's users in", families: ['oauth-clients'],
    code: code(() => import('./commands/oauth-clients.ts')),
    commands: [
      { name: 'list', summary: 'List the OAuth clients', options: { filter: FILTER } },
      { name: 'show', summary: 'Show an OAuth client', args: ['<client_id>'] },
      {
        name: 'create', summary: 'Register a client for the authorization code flow (the secret is shown once)', args: ['<name>'],
        options: {
          'redirect-uri': { type: 'string', multiple: true, description: 'A redirect URI (repeat for more); required', placeholder: 'URL' },
          scope: { type: 'string', description: 'Space-separated scopes; default "openid profile email profile:read rooms:connect"', placeholder: 'SCOPES' },
          public: { type: 'boolean', description: 'A public client (no secret): single-page and native apps' },
        },
      },
      { name: 'delete', summary: 'Delete an OAuth client (its tokens stop working)', args: ['<client_id>'], confirm: 'Delete OAuth client <client_id>? Its tokens stop working.' },
    ],
  },
  {
    name: 'external-oauth', summary: 'OAuth registrations at other services that agents sign in to (the project\'s, or a room\'s with --room)', families: ['external-oauth'],
    code: code(() => import('./commands/external-oauth.ts')),
    commands: [
      { name: 'list', summary: 'List the registrations', options: { room: ROOM, filter: { ...FILTER, description: 'Only registrations whose client id contains this text' } } },
      {
        name: 'create', summary: 'Register a client of another OAuth server',
        options: {
          'client-id': { type: 'string', description: 'The client id there; required', placeholder: 'ID' },
          'client-secret-file': { type: 'string', description: 'A file holding the client secret (- for standard input)', placeholder: 'PATH' },
          'authorization-endpoint': { type: 'string', description: 'Its authorization endpoint', placeholder: 'URL' },
          'token-endpoint': { type: 'string', description: 'Its token endpoint', placeholder: 'URL' },
          scope: { type: 'string', multiple: true, description: 'A scope to ask for (repeat for more)', placeholder: 'SCOPE' },
          'delegated-to': { type: 'string', description: 'The participant identity it is for (default everyone)', placeholder: 'IDENTITY' },
          room: ROOM,
        },
      },
      { name: 'delete', summary: 'Delete a registration', args: ['<registration_id>'], options: { room: ROOM }, confirm: 'Delete registration <registration_id>?' },
    ],
  },
  {
    name: 'secrets', summary: "The project's secrets, and a room's (--room); values are write-only", families: ['secrets'],
    code: code(() => import('./commands/secrets.ts')),
    commands: [
      { name: 'list', summary: 'List the secrets (never their values)', options: { room: ROOM, filter: FILTER } },
      {
        name: 'create', summary: 'Create a secret; the value is read from a file or standard input, never the command line', args: ['<name>'],
        options: {
          type: { type: 'string', description: 'keys (a JSON object of strings), docker (registry credentials) or a label of your own; default keys', placeholder: 'TYPE' },
          'value-file': { type: 'string', description: 'The file holding the value (- for standard input); required', placeholder: 'PATH' },
          room: ROOM,
          'for-identity': { type: 'string', description: 'A room secret for this participant only', placeholder: 'IDENTITY' },
          'delegated-to': { type: 'string', description: 'The identity that may use it on the participant\'s behalf', placeholder: 'IDENTITY' },
        },
      },
      {
        name: 'update', summary: "Replace a secret's value (and type)", args: ['<secret_id>'],
        options: {
          type: { type: 'string', description: 'The new type (default: keep it)', placeholder: 'TYPE' },
          'value-file': { type: 'string', description: 'The file holding the value (- for standard input); required', placeholder: 'PATH' },
          room: ROOM,
          'for-identity': { type: 'string', description: 'Which value of a room secret', placeholder: 'IDENTITY' },
          'delegated-to': { type: 'string', description: 'Which value of a room secret', placeholder: 'IDENTITY' },
        },
      },
      {
        name: 'delete', summary: 'Delete a secret', args: ['<secret_id>'], confirm: 'Delete secret <secret_id>?',
        options: { room: ROOM, 'for-identity': { type: 'string', description: 'Which value of a room secret', placeholder: 'IDENTITY' }, 'delegated-to': { type: 'string', description: 'Which value of a room secret', placeholder: 'IDENTITY' } },
      },
    ],
  },
  {
    name: 'shares', summary: 'Links into one room for people without an account', families: ['shares'],
    code: code(() => import('./commands/shares.ts')),
    commands: [
      { name: 'list', summary: 'List the shares (never their tokens)', options: { filter: { ...FILTER, description: 'Only shares whose label or room contains this text' } } },
      {
        name: 'create', summary: 'Create a share of a room and print its token (shown once)',
        options: {
          room: { type: 'string', description: 'The room; required', placeholder: 'ROOM' },
          label: { type: 'string', description: 'A label', placeholder: 'TEXT' },
          'expires-at': { type: 'string', description: 'When it stops working, ISO 8601', placeholder: 'TIME' },
          grants: { type: 'string', description: 'What its holder may do, a JSON object of participant-token grants (default: viewer)', placeholder: 'JSON' },
        },
      },
      { name: 'delete', summary: 'Delete a share: its token stops working', args: ['<share_id>'], confirm: 'Delete share <share_id>? Its token stops working.' },
    ],
  },
  {
    name: 'webhooks', summary: 'Webhooks, their deliveries, redelivery and test events (`atrium webhooks listen` receives them locally)', families: ['webhooks'],
    code: code(() => import('./commands/webhooks.ts')),
    commands: [
      { name: 'list', summary: 'List the webhooks', options: { filter: { ...FILTER, description: 'Only webhooks whose name or URL contains this text' } } },
      {
        name: 'create', summary: 'Create a webhook and print its signing secret (shown once; for `atrium webhooks listen --secret`)', args: ['<url>'],
        options: {
          secret: { type: 'string', description: 'The signing secret; default a new random one', placeholder: 'SECRET' },
          event: { type: 'string', multiple: true, description: 'An event type (repeat for more); required', placeholder: 'TYPE' },
          name: { type: 'string', description: 'A name; default the URL\'s host', placeholder: 'NAME' },
        },
      },
      { name: 'delete', summary: 'Delete a webhook', args: ['<webhook_id>'], confirm: 'Delete webhook <webhook_id> and its delivery history?' },
      { name: 'deliveries', summary: "A webhook's delivery history, newest first", args: ['<webhook_id>'], options: { status: { type: 'string', description: 'Only pending, succeeded, failed or cancelled deliveries', placeholder: 'STATUS' } } },
      { name: 'test', summary: 'Send a signed webhook.test delivery now (it shows in the deliveries)', args: ['<webhook_id>'] },
      { name: 'redeliver', summary: 'Send a delivery again now', args: ['<webhook_id>', '<delivery_id>'] },
    ],
  },
  {
    name: 'feeds', summary: 'Feeds, their messages and the subscriptions that write them into rooms\' storage', families: ['feeds'],
    code: code(() => import('./commands/feeds.ts')),
    commands: [
      { name: 'list', summary: 'List the feeds', options: { filter: FILTER } },
      { name: 'show', summary: 'Show a feed', args: ['<feed>'] },
      {
        name: 'create', summary: 'Create a feed', args: ['<name>'],
        options: {
          visibility: { type: 'string', description: 'private (default), project or public; fixed at creation', placeholder: 'WHO' },
          description: { type: 'string', description: 'What it carries', placeholder: 'TEXT' },
          schema: FILE('A JSON Schema every message must match'),
          paused: { type: 'boolean', description: 'Created paused' },
        },
      },
      { name: 'update', summary: 'Pause or resume a feed, or change its description', args: ['<feed>'], options: { pause: { type: 'boolean', description: 'Pause it' }, resume: { type: 'boolean', description: 'Resume it' }, description: { type: 'string', description: 'The new description', placeholder: 'TEXT' } } },
      { name: 'delete', summary: 'Delete a feed', args: ['<feed>'], confirm: 'Delete feed <feed>?' },
      { name: 'publish', summary: 'Publish a message (a JSON value)', args: ['<feed>', '<json>'] },
      { name: 'subscriptions', summary: "A feed's subscriptions", args: ['<feed>'] },
      { name: 'subscribe', summary: 'Write a feed\'s messages into a room\'s storage from now on', args: ['<feed>'], options: { room: { type: 'string', description: 'The room; required', placeholder: 'ROOM' }, path: { type: 'string', description: 'The folder in the room\'s storage (default its root)', placeholder: 'PATH' } } },
      { name: 'unsubscribe', summary: 'Delete a subscription', args: ['<feed>', '<subscription_id>'], confirm: 'Delete subscription <subscription_id> of feed <feed>?' },
    ],
  },
  {
    name: 'llm-loggers', summary: "Copy the LLM proxy's calls that match a filter into a feed", families: ['llm-loggers'],
    code: code(() => import('./commands/llm-loggers.ts')),
    commands: [
      { name: 'list', summary: 'List the LLM loggers', options: { filter: { ...FILTER, description: 'Only loggers whose filter expression contains this text' } } },
      { name: 'create', summary: 'Create an LLM logger', options: { feed: { type: 'string', description: 'The destination feed, by name or id; required', placeholder: 'FEED' }, expression: { type: 'string', description: 'The JMESPath filter the calls must match; required', placeholder: 'JMESPATH' }, paused: { type: 'boolean', description: 'Created paused' } } },
      { name: 'update', summary: 'Change, pause or resume an LLM logger', args: ['<logger_id>'], options: { expression: { type: 'string', description: 'The new filter', placeholder: 'JMESPATH' }, pause: { type: 'boolean', description: 'Pause it' }, resume: { type: 'boolean', description: 'Resume it' } } },
      { name: 'delete', summary: 'Delete an LLM logger', args: ['<logger_id>'], confirm: 'Delete LLM logger <logger_id>?' },
    ],
  },
  {
    name: 'routes', summary: "Domains whose traffic goes to a room's services or an agent", families: ['routes'],
    code: code(() => import('./commands/routes.ts')),
    commands: [
      { name: 'list', summary: 'List the routes', options: { filter: { ...FILTER, description: 'Only routes whose domain contains this text' } } },
      { name: 'show', summary: "Show a route's spec", args: ['<domain>'] },
      { name: 'create', summary: 'Create a route from a RouteSpec file', options: { file: FILE('The RouteSpec') } },
      { name: 'update', summary: "Replace a route's spec", args: ['<domain>'], options: { file: FILE('The RouteSpec') } },
      { name: 'delete', summary: 'Delete a route', args: ['<domain>'], confirm: 'Delete the route of <domain>?' },
    ],
  },
  {
    name: 'mailboxes', summary: "Email addresses whose mail goes to a room's queue", families: ['mailboxes'],
    code: code(() => import('./commands/mailboxes.ts')),
    commands: [
      { name: 'list', summary: 'List the mailboxes', options: { filter: { ...FILTER, description: 'Only addresses that contain this text' } } },
      { name: 'show', summary: 'Show a mailbox', args: ['<address>'] },
      { name: 'create', summary: 'Create a mailbox under an allowed mail domain', args: ['<address>'], options: { room: { type: 'string', description: 'The room; required', placeholder: 'ROOM' }, queue: { type: 'string', description: 'The room queue; required', placeholder: 'QUEUE' }, public: { type: 'boolean', description: 'Accept mail from anyone (default: project members only)' } } },
      { name: 'update', summary: 'Send a mailbox\'s mail elsewhere', args: ['<address>'], options: { room: { type: 'string', description: 'The room', placeholder: 'ROOM' }, queue: { type: 'string', description: 'The room queue', placeholder: 'QUEUE' }, public: { type: 'boolean', description: 'Accept mail from anyone' }, private: { type: 'boolean', description: 'Accept mail from project members only' } } },
      { name: 'delete', summary: 'Delete a mailbox', args: ['<address>'], confirm: 'Delete mailbox <address>?' },
    ],
  },
  {
    name: 'repositories', summary: 'Image repositories in the registry, and tokens for them', families: ['repositories'],
    code: code(() => import('./commands/repositories.ts')),
    commands: [
      { name: 'list', summary: 'List the repositories', options: { filter: FILTER } },
      { name: 'create', summary: 'Create a repository', args: ['<name>'], options: { description: { type: 'string', description: 'What it holds', placeholder: 'TEXT' } } },
      { name: 'delete', summary: 'Delete a repository', args: ['<repository>'], confirm: 'Delete repository <repository>?' },
      { name: 'token', summary: 'A registry token for docker login (pull; --push too)', args: ['<repository>'], options: { push: { type: 'boolean', description: 'Pull and push' } } },
    ],
  },
  {
    name: 'policies', summary: 'Roles on one room, feed or repository, beyond project roles', families: [],
    code: code(() => import('./commands/policies.ts')),
    commands: [
      { name: 'list', summary: 'Who holds which roles on the resource', args: ['<room|feed|repository>', '<name>'] },
      {
        name: 'grant', summary: 'Give a user, an API key or every member roles on the resource', args: ['<room|feed|repository>', '<name>'],
        options: {
          user: { type: 'string', description: 'A project user, by email', placeholder: 'EMAIL' },
          'api-key': { type: 'string', description: 'An API key of the project, by id', placeholder: 'ID' },
          members: { type: 'boolean', description: 'Every project member' },
          developers: { type: 'boolean', description: 'Every project developer' },
          role: { type: 'string', multiple: true, description: 'A role on the resource (repeat for more); required', placeholder: 'ROLE' },
        },
      },
      {
        name: 'revoke', summary: 'Take every role on the resource from a subject', args: ['<room|feed|repository>', '<name>'], confirm: 'Revoke the roles on <room|feed|repository> <name>?',
        options: {
          user: { type: 'string', description: 'A project user, by email', placeholder: 'EMAIL' },
          'api-key': { type: 'string', description: 'An API key, by id', placeholder: 'ID' },
          members: { type: 'boolean', description: 'Every project member' },
          developers: { type: 'boolean', description: 'Every project developer' },
        },
      },
    ],
  },
  {
    name: 'billing', summary: 'Balance, transactions and auto-recharge (`atrium billing verify` checks the books on the server)', families: ['billing'],
    code: code(() => import('./commands/billing.ts')),
    commands: [
      { name: 'balance', summary: 'The balance, what is reserved and available, and auto-recharge' },
      { name: 'transactions', summary: 'The ledger, newest first', options: { filter: { ...FILTER, description: 'Only entries whose type or description contains this text' }, limit: LIMIT } },
      {
        name: 'recharge', summary: 'Set auto-recharge',
        options: {
          on: { type: 'boolean', description: 'Turn it on' }, off: { type: 'boolean', description: 'Turn it off' },
          amount: { type: 'string', description: 'Bought by each recharge', placeholder: 'AMOUNT' },
          threshold: { type: 'string', description: 'Recharge when the balance falls below this', placeholder: 'AMOUNT' },
          'monthly-budget': { type: 'string', description: 'At most this much a month', placeholder: 'AMOUNT' },
        },
      },
    ],
  },
  {
    name: 'usage', summary: 'What the project used and what it cost: LLM calls and session minutes', families: ['usage'], default: 'report',
    code: code(() => import('./commands/usage.ts')),
    commands: [
      {
        name: 'report', summary: 'Cost by model (default) or by day, this month unless told otherwise',
        options: {
          by: { type: 'string', description: 'model (default), provider, room or day', placeholder: 'WHAT' },
          start: { type: 'string', description: 'From this day or time, ISO 8601 (default: the first of this month)', placeholder: 'TIME' },
          end: { type: 'string', description: 'Until this day or time, exclusive (default: now)', placeholder: 'TIME' },
          provider: { type: 'string', description: 'Only this provider: openai, anthropic or sessions', placeholder: 'NAME' },
          room: { type: 'string', description: 'Only the calls of this room', placeholder: 'ROOM' },
        },
      },
    ],
  },
  {
    name: 'audit', summary: "The audit log, a project's or the deployment's: who did what, when, with which credential", families: ['audit-log'], default: 'list',
    code: code(() => import('./commands/audit.ts')),
    commands: [
      { name: 'list', summary: "List the project's audit entries, newest first, filtered; --jsonl exports them", options: AUDIT_FILTERS },
      {
        name: 'deployment', serverHost: true, options: AUDIT_FILTERS,
        summary: "List the deployment's own entries (sign-ins, sign-ups, second factors, the first run, key rotations) from the server's database, where the server runs; --jsonl exports them",
      },
    ],
  },
];

const COMMON_OPTIONS: Record<string, Option> = {
  server: { type: 'string', description: 'The Atrium server (default: ATRIUM_URL, else the one you are signed in to)', placeholder: 'URL' },
  json: { type: 'boolean', description: 'Print JSON instead of a table' },
  help: { type: 'boolean', description: 'Show this help' },
};
const PROJECT_OPTION: Option = { type: 'string', description: 'The project (default: ATRIUM_PROJECT, else your only project)', placeholder: 'ID' };
const YES_OPTION: Option = { type: 'boolean', description: 'Do not ask for confirmation on a terminal' };

function optionsOf(command: Command): Record<string, Option> {
  const { server, ...local } = COMMON_OPTIONS;
  return {
    ...(command.noProject || command.serverHost ? {} : { project: PROJECT_OPTION }), ...command.options, ...(command.confirm ? { yes: YES_OPTION } : {}),
    ...(command.serverHost ? local : { server, ...local }),
  };
}

function optionLine(name: string, option: Option): string {
  const flag = `--${name}${option.type === 'string' ? ` ${option.placeholder ?? 'VALUE'}` : ''}`;
  return `  ${flag.padEnd(26)} ${option.description}`;
}

export function groupHelp(group: Group): string {
  const width = Math.max(...group.commands.map((c) => `${c.name} ${(c.args ?? []).join(' ')}`.length));
  return [
    `Usage: atrium ${group.name} <command> [options]`,
    '',
    `${group.summary}.`,
    '',
    'Commands:',
    ...group.commands.map((c) => `  ${`${c.name} ${(c.args ?? []).join(' ')}`.trimEnd().padEnd(width)}   ${c.summary}`),
    '',
    `${group.default ? `\`atrium ${group.name}\` alone runs \`atrium ${group.name} ${group.default}\`. ` : ''}Run \`atrium ${group.name} <command> --help\` for a command's options.`,
  ].join('\n');
}

export function commandHelp(group: Group, command: Command): string {
  return [
    `Usage: atrium ${group.name} ${command.name}${command.args?.length ? ` ${command.args.join(' ')}` : ''} [options]`,
    '',
    `${command.summary}.${command.confirm ? ' Asks first on a terminal (--yes skips the question).' : ''}`,
    '',
    'Options:',
    ...Object.entries(optionsOf(command)).map(([name, option]) => optionLine(name, option)),
  ].join('\n');
}

/**
 * The name closest to `typed` among `names`, when it is close enough to be what was meant: at most
 * a third of its letters wrong (two for short names), or a name that starts with what was typed.
 */
export function nearest(typed: string, names: readonly string[]): string | undefined {
  const prefixed = names.filter((name) => name.startsWith(typed));
  if (typed.length >= 2 && prefixed.length === 1) return prefixed[0];
  const best = closest(typed, [...names]);
  return distance(typed, best) <= Math.max(2, Math.floor(typed.length / 3)) ? best : undefined;
}

/** The question of a deleting command with its arguments filled in: `Delete room lobby?`. */
function question(command: Command, args: readonly string[]): string {
  let text = command.confirm!;
  (command.args ?? []).forEach((name, i) => { text = text.replaceAll(name, args[i] ?? name); });
  return text;
}

/** Runs `atrium <group> <command> …`; returns the exit code. */
export async function runGroup(group: Group, argv: string[], io: CommandIo = processIo()): Promise<number> {
  const [typed, ...rest] = argv;
  if (typed === 'help' || typed === '--help' || typed === '-h') {
    io.out.write(`${groupHelp(group)}\n`);
    return 0;
  }
  // A group with a default command runs it when no command is named (`atrium usage --by day`).
  const name = typed === undefined || typed.startsWith('-') ? (group.default ?? typed) : typed;
  const args = typed !== undefined && name !== typed ? argv : rest;
  if (name === undefined) {
    io.err.write(`${groupHelp(group)}\n`);
    return 2;
  }
  const command = group.commands.find((c) => c.name === name);
  if (!command) {
    const guess = nearest(name, group.commands.map((c) => c.name));
    io.err.write(`atrium: unknown ${group.name} command ${JSON.stringify(name)}.${guess ? ` Did you mean \`atrium ${group.name} ${guess}\`?` : ''}\nRun \`atrium ${group.name} --help\` for its commands.\n`);
    return 2;
  }
  const spec = optionsOf(command);
  let parsed;
  try {
    parsed = parseArgs({
      args, allowPositionals: true, strict: true,
      options: Object.fromEntries(Object.entries(spec).map(([key, o]) => [key, { type: o.type, ...(o.multiple ? { multiple: true } : {}) } satisfies ParseArgsOptionDescriptor])),
    });
  } catch (error) {
    io.err.write(`atrium: ${(error as Error).message}\nRun \`atrium ${group.name} ${command.name} --help\` for its options.\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.out.write(`${commandHelp(group, command)}\n`);
    return 0;
  }
  // The API client and the output are loaded only for a command that runs.
  const { apiClientFor, describeFailure, record, resolveServer, table } = await import('./api.ts');
  let server = '';
  let host: Promise<AppContext> | undefined;
  try {
    const required = (command.args ?? []).filter((a) => a.startsWith('<'));
    if (positionals.length < required.length) throw new UsageError(`missing ${required[positionals.length]}`);
    if (command.confirm && !values.yes && io.ask) {
      const answer = await io.ask(`${question(command, positionals)} [y/N] `);
      if (!/^y(es)?$/i.test(answer.trim())) {
        io.err.write('Nothing was changed.\n');
        return 1;
      }
    }
    if (!command.serverHost) server = resolveServer(values.server as string | undefined, io.env);
    let api: ReturnType<typeof apiClientFor> | undefined;
    const tty = Boolean(io.err.isTTY);
    const ctx: Context = {
      get api() {
        api ??= apiClientFor(server, io.env);
        return api;
      },
      server, args: positionals, options: values as Context['options'],
      async host() {
        host ??= import('../config.ts').then(({ loadConfig }) => openHost(loadConfig(io.env)));
        return host;
      },
      async project() {
        const chosen = (values.project as string | undefined) ?? io.env.ATRIUM_PROJECT;
        if (chosen) return chosen;
        const { unwrap } = await import('../api-client/client.ts');
        const { projects: mine } = await unwrap(ctx.api.GET('/accounts/projects'));
        if (mine.length === 1) return mine[0]!.id;
        throw new UsageError(mine.length === 0
          ? 'You are a member of no project: create one with `atrium projects create NAME`'
          : `You are a member of ${mine.length} projects: choose one with --project ID or ATRIUM_PROJECT=ID (see \`atrium projects list\`)`);
      },
      progress(text, done) {
        if (tty) io.err.write(`\r\x1b[2K${text}${done ? '\n' : ''}`);
        else if (done) io.err.write(`${text}\n`);
      },
    };
    const run = (await group.code())[command.name];
    if (!run) throw new Error(`atrium ${group.name} ${command.name} has no code`);
    const result = await run(ctx);
    if (values.json) {
      const data = 'rows' in result ? (result.data ?? result.rows) : 'record' in result ? result.record : (result.data ?? { message: result.message });
      io.out.write(`${JSON.stringify(data, null, 2)}\n`);
    } else if ('rows' in result) io.out.write(table(result.rows, result.columns));
    else if ('record' in result) io.out.write(record(result.record, result.keys));
    else io.out.write(`${result.message}\n`);
    return 0;
  } catch (error) {
    io.err.write(`atrium: ${describeFailure(error, server || '(no server)')}\n`);
    return error instanceof UsageError ? 2 : 1;
  } finally {
    if (host) await host.then((opened) => opened.database.close(), () => {});
  }
}

