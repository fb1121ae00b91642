// The CLI's command groups for everyday work — projects, members, rooms, API keys, OAuth clients,
// webhooks, storage, the audit log — declared as data: each command names its arguments and options, says what it
// does (the help text and docs/cli.md come from here), calls the API through the generated client
// and returns rows, a record or a message; printing as a table or `--json`, the server, the
// credential, the project and error messages are handled once, in `runGroup`.
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, statSync } from 'node:fs';
import { basename } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parseArgs, type ParseArgsOptionDescriptor } from 'node:util';
import { unwrap, type ApiClient } from '../api-client/client.ts';
import { apiClientFor, bytes, describeFailure, processIo, record, resolveServer, table, transferLine, UsageError, type CommandIo } from './api.ts';

interface Option { type: 'string' | 'boolean'; multiple?: boolean; description: string; placeholder?: string }

type Result =
  | { rows: Record<string, unknown>[]; columns: string[]; data?: unknown }
  | { record: Record<string, unknown>; keys?: string[] }
  | { message: string; data?: unknown };

interface Context {
  api: ApiClient;
  server: string;
  args: string[];
  options: Record<string, string | boolean | string[] | undefined>;
  /** The project to work in: --project, ATRIUM_PROJECT, or the caller's only project. */
  project(): Promise<string>;
  /** Progress for long transfers, on stderr. */
  progress(text: string, done?: boolean): void;
}

interface Command {
  name: string;
  summary: string;
  /** Positional arguments, e.g. ['<email>', '[path]']. */
  args?: string[];
  options?: Record<string, Option>;
  /** Commands that act on no project skip the --project option. */
  noProject?: boolean;
  run(ctx: Context): Promise<Result>;
}

export interface Group {
  name: string;
  summary: string;
  commands: Command[];
}

const ROLES_OPTION: Option = { type: 'string', multiple: true, description: 'A project role (repeat for more); default member', placeholder: 'ROLE' };

const str = (ctx: Context, name: string) => ctx.options[name] as string | undefined;
const arg = (ctx: Context, index: number, name: string): string => {
  const value = ctx.args[index];
  if (value === undefined) throw new UsageError(`missing ${name}`);
  return value;
};

const projects: Group = {
  name: 'projects',
  summary: 'Projects you can use',
  commands: [
    {
      name: 'list', summary: 'List the projects you are a member of', noProject: true,
      async run({ api }) {
        const { projects } = await unwrap(api.GET('/accounts/projects'));
        return { rows: projects, columns: ['id', 'name', 'enabled', 'created_at'], data: projects };
      },
    },
    {
      name: 'show', summary: 'Show a project', args: ['[project_id]'],
      async run(ctx) {
        const id = ctx.args[0] ?? (await ctx.project());
        return { record: await unwrap(ctx.api.GET('/accounts/projects/{project_id}', { params: { path: { project_id: id } } })) };
      },
    },
    {
      name: 'create', summary: 'Create a project (you become its admin)', args: ['<name>'], noProject: true,
      async run(ctx) {
        return { record: await unwrap(ctx.api.POST('/accounts/projects', { body: { name: arg(ctx, 0, '<name>') } })) };
      },
    },
  ],
};

const members: Group = {
  name: 'members',
  summary: 'Project members and invitations',
  commands: [
    {
      name: 'list', summary: 'List the members of the project',
      async run(ctx) {
        const body = await unwrap(ctx.api.GET('/accounts/projects/{project_id}/users', { params: { path: { project_id: await ctx.project() }, query: { count: 1000 } } }));
        return { rows: body.users, columns: ['user_id', 'email', 'roles', 'added_at'], data: body };
      },
    },
    {
      name: 'add', summary: 'Add a member by email (a known address joins at once, an unknown one is invited) or by user id', args: ['<email|user_id>'],
      options: { role: ROLES_OPTION },
      async run(ctx) {
        const who = arg(ctx, 0, '<email|user_id>');
        const roles = ctx.options.role as string[] | undefined;
        const body = await unwrap(ctx.api.POST('/accounts/projects/{project_id}/users', {
          params: { path: { project_id: await ctx.project() } },
          body: { ...(who.includes('@') ? { email: who } : { user_id: who }), ...(roles ? { roles: roles as never } : {}) },
        }));
        if (body.status === 'invited') {
          const mailed = body.invitation?.mail_sent === false ? ' (not mailed: the server has no mail transport; resend once it has)' : '';
          return { message: `Invited ${who}: the invitation expires ${body.invitation?.expires_at}${mailed}`, data: body };
        }
        return { message: `Added ${who} (user ${body.user_id})`, data: body };
      },
    },
    {
      name: 'invite', summary: 'Invite an address to the project (the same as add with an email)', args: ['<email>'],
      options: { role: ROLES_OPTION },
      async run(ctx) {
        if (!arg(ctx, 0, '<email>').includes('@')) throw new UsageError('invite takes an email address; add a user by id with `atrium members add USER_ID`');
        return members.commands.find((c) => c.name === 'add')!.run(ctx);
      },
    },
    {
      name: 'set-roles', summary: "Replace a member's roles", args: ['<user_id>'], options: { role: ROLES_OPTION },
      async run(ctx) {
        const roles = (ctx.options.role as string[] | undefined) ?? [];
        if (roles.length === 0) throw new UsageError('name at least one --role');
        await unwrap(ctx.api.PUT('/accounts/projects/{project_id}/users/{user_id}', { params: { path: { project_id: await ctx.project(), user_id: arg(ctx, 0, '<user_id>') } }, body: { roles: roles as never } }));
        return { message: `Roles of ${ctx.args[0]}: ${roles.join(', ')}` };
      },
    },
    {
      name: 'remove', summary: 'Remove a member from the project', args: ['<user_id>'],
      async run(ctx) {
        await unwrap(ctx.api.DELETE('/accounts/projects/{project_id}/users/{user_id}', { params: { path: { project_id: await ctx.project(), user_id: arg(ctx, 0, '<user_id>') } } }));
        return { message: `Removed ${ctx.args[0]}` };
      },
    },
    {
      name: 'invitations', summary: 'List pending and expired invitations',
      async run(ctx) {
        const body = await unwrap(ctx.api.GET('/accounts/projects/{project_id}/invitations', { params: { path: { project_id: await ctx.project() }, query: { limit: 1000 } } }));
        return { rows: body.invitations, columns: ['id', 'email', 'roles', 'status', 'sent_count', 'expires_at'], data: body };
      },
    },
    {
      name: 'resend', summary: 'Send an invitation again with a new link (the old one stops working)', args: ['<invitation_id>'],
      async run(ctx) {
        const body = await unwrap(ctx.api.POST('/accounts/projects/{project_id}/invitations/{invitation_id}/resend', { params: { path: { project_id: await ctx.project(), invitation_id: arg(ctx, 0, '<invitation_id>') } }, body: {} }));
        return { message: `Sent again to ${body.email}; expires ${body.expires_at}`, data: body };
      },
    },
    {
      name: 'revoke', summary: 'Revoke an invitation', args: ['<invitation_id>'],
      async run(ctx) {
        await unwrap(ctx.api.DELETE('/accounts/projects/{project_id}/invitations/{invitation_id}', { params: { path: { project_id: await ctx.project(), invitation_id: arg(ctx, 0, '<invitation_id>') } } }));
        return { message: `Revoked ${ctx.args[0]}` };
      },
    },
  ],
};

const rooms: Group = {
  name: 'rooms',
  summary: 'Rooms of the project, and connection info for one',
  commands: [
    {
      name: 'list', summary: 'List the rooms',
      async run(ctx) {
        const body = await unwrap(ctx.api.GET('/accounts/projects/{project_id}/rooms', { params: { path: { project_id: await ctx.project() }, query: { limit: 1000 } } }));
        return { rows: body.rooms, columns: ['id', 'name', 'created_at'], data: body };
      },
    },
    {
      name: 'create', summary: 'Create a room (nothing happens if it exists)', args: ['<name>'],
      async run(ctx) {
        return { record: await unwrap(ctx.api.POST('/accounts/projects/{project_id}/rooms', { params: { path: { project_id: await ctx.project() } }, body: { name: arg(ctx, 0, '<name>'), if_not_exists: true } })) };
      },
    },
    {
      name: 'delete', summary: 'Delete a room', args: ['<name>'],
      async run(ctx) {
        const project_id = await ctx.project();
        const room = await unwrap(ctx.api.GET('/accounts/projects/{project_id}/rooms/{room_name}', { params: { path: { project_id, room_name: arg(ctx, 0, '<name>') } } }));
        await unwrap(ctx.api.DELETE('/accounts/projects/{project_id}/rooms/{room_id}', { params: { path: { project_id, room_id: room.id } } }));
        return { message: `Deleted room ${room.name}` };
      },
    },
    {
      name: 'connect', summary: 'Connection info for a room: the room URL and a participant token for you', args: ['<name>'],
      async run(ctx) {
        return { record: await unwrap(ctx.api.POST('/accounts/projects/{project_id}/rooms/{room_name}/connect', { params: { path: { project_id: await ctx.project(), room_name: arg(ctx, 0, '<name>') } }, body: {} })) };
      },
    },
  ],
};

const apiKeys: Group = {
  name: 'api-keys',
  summary: 'Project API keys',
  commands: [
    {
      name: 'list', summary: 'List the API keys (values are never shown again)',
      async run(ctx) {
        const { keys } = await unwrap(ctx.api.GET('/accounts/projects/{project_id}/api-keys', { params: { path: { project_id: await ctx.project() } } }));
        return { rows: keys, columns: ['id', 'name', 'roles', 'created_at'], data: keys };
      },
    },
    {
      name: 'create', summary: 'Create an API key and print its value (shown once)', args: ['<name>'], options: { role: { ...ROLES_OPTION, description: 'A role of the key (repeat for more); default admin' } },
      async run(ctx) {
        const roles = ctx.options.role as string[] | undefined;
        return { record: await unwrap(ctx.api.POST('/accounts/projects/{project_id}/api-keys', { params: { path: { project_id: await ctx.project() } }, body: { name: arg(ctx, 0, '<name>'), ...(roles ? { roles: roles as never } : {}) } })) };
      },
    },
    {
      name: 'delete', summary: 'Delete an API key', args: ['<id>'],
      async run(ctx) {
        await unwrap(ctx.api.DELETE('/accounts/projects/{project_id}/api-keys/{id}', { params: { path: { project_id: await ctx.project(), id: arg(ctx, 0, '<id>') } } }));
        return { message: `Deleted API key ${ctx.args[0]}` };
      },
    },
  ],
};

const oauthClients: Group = {
  name: 'oauth-clients',
  summary: "OAuth clients that sign the project's users in",
  commands: [
    {
      name: 'list', summary: 'List the OAuth clients',
      async run(ctx) {
        const body = await unwrap(ctx.api.GET('/accounts/projects/{project_id}/oauth/clients', { params: { path: { project_id: await ctx.project() }, query: { count: 1000 } } }));
        return { rows: body.clients, columns: ['client_id', 'name', 'public', 'redirect_uris', 'scope'], data: body };
      },
    },
    {
      name: 'show', summary: 'Show an OAuth client', args: ['<client_id>'],
      async run(ctx) {
        return { record: await unwrap(ctx.api.GET('/accounts/projects/{project_id}/oauth/clients/{client_id}', { params: { path: { project_id: await ctx.project(), client_id: arg(ctx, 0, '<client_id>') } } })) };
      },
    },
    {
      name: 'create', summary: 'Register a client for the authorization code flow (the secret is shown once)', args: ['<name>'],
      options: {
        'redirect-uri': { type: 'string', multiple: true, description: 'A redirect URI (repeat for more); required', placeholder: 'URL' },
        scope: { type: 'string', description: 'Space-separated scopes; default "openid profile email profile:read rooms:connect"', placeholder: 'SCOPES' },
        public: { type: 'boolean', description: 'A public client (no secret): single-page and native apps' },
      },
      async run(ctx) {
        const redirects = ctx.options['redirect-uri'] as string[] | undefined;
        if (!redirects?.length) throw new UsageError('give at least one --redirect-uri');
        return {
          record: await unwrap(ctx.api.POST('/accounts/projects/{project_id}/oauth/clients', {
            params: { path: { project_id: await ctx.project() } },
            body: {
              name: arg(ctx, 0, '<name>'), grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], redirect_uris: redirects,
              scope: str(ctx, 'scope') ?? 'openid profile email profile:read rooms:connect', public: ctx.options.public === true,
            } as never,
          })),
        };
      },
    },
    {
      name: 'delete', summary: 'Delete an OAuth client (its tokens stop working)', args: ['<client_id>'],
      async run(ctx) {
        await unwrap(ctx.api.DELETE('/accounts/projects/{project_id}/oauth/clients/{client_id}', { params: { path: { project_id: await ctx.project(), client_id: arg(ctx, 0, '<client_id>') } } }));
        return { message: `Deleted OAuth client ${ctx.args[0]}` };
      },
    },
  ],
};

const webhooks: Group = {
  name: 'webhooks',
  summary: 'Webhooks, their deliveries, redelivery and test events (`atrium webhooks listen` receives them locally)',
  commands: [
    {
      name: 'list', summary: 'List the webhooks',
      async run(ctx) {
        const { webhooks: rows } = await unwrap(ctx.api.GET('/accounts/projects/{project_id}/webhooks', { params: { path: { project_id: await ctx.project() } } }));
        return { rows, columns: ['id', 'name', 'url', 'events', 'enabled'], data: rows };
      },
    },
    {
      name: 'create', summary: 'Create a webhook and print its signing secret (shown once; for `atrium webhooks listen --secret`)', args: ['<url>'],
      options: {
        secret: { type: 'string', description: 'The signing secret; default a new random one', placeholder: 'SECRET' },
        event: { type: 'string', multiple: true, description: 'An event type (repeat for more); required', placeholder: 'TYPE' },
        name: { type: 'string', description: 'A name; default the URL\'s host', placeholder: 'NAME' },
      },
      async run(ctx) {
        const url = arg(ctx, 0, '<url>');
        const events = ctx.options.event as string[] | undefined;
        if (!events?.length) throw new UsageError('give at least one --event');
        return {
          record: await unwrap(ctx.api.POST('/accounts/projects/{project_id}/webhooks', {
            params: { path: { project_id: await ctx.project() } },
            body: { name: str(ctx, 'name') ?? (URL.parse(url)?.host || 'webhook'), url, events, secret: str(ctx, 'secret') ?? randomBytes(32).toString('base64url') } as never,
          })),
        };
      },
    },
    {
      name: 'delete', summary: 'Delete a webhook', args: ['<webhook_id>'],
      async run(ctx) {
        await unwrap(ctx.api.DELETE('/accounts/projects/{project_id}/webhooks/{webhook_id}', { params: { path: { project_id: await ctx.project(), webhook_id: arg(ctx, 0, '<webhook_id>') } } }));
        return { message: `Deleted webhook ${ctx.args[0]}` };
      },
    },
    {
      name: 'deliveries', summary: "A webhook's delivery history, newest first", args: ['<webhook_id>'],
      options: { status: { type: 'string', description: 'Only pending, succeeded, failed or cancelled deliveries', placeholder: 'STATUS' } },
      async run(ctx) {
        const status = str(ctx, 'status');
        const body = await unwrap(ctx.api.GET('/accounts/projects/{project_id}/webhooks/{webhook_id}/deliveries', {
          params: { path: { project_id: await ctx.project(), webhook_id: arg(ctx, 0, '<webhook_id>') }, query: { limit: 100, ...(status ? { status: status as never } : {}) } },
        }));
        return { rows: body.deliveries as Record<string, unknown>[], columns: ['id', 'event', 'status', 'attempt_count', 'created_at'], data: body };
      },
    },
    {
      name: 'test', summary: 'Send a signed webhook.test delivery now (it shows in the deliveries)', args: ['<webhook_id>'],
      async run(ctx) {
        const body = await unwrap(ctx.api.POST('/accounts/projects/{project_id}/webhooks/{webhook_id}/test', {
          params: { path: { project_id: await ctx.project(), webhook_id: arg(ctx, 0, '<webhook_id>') } }, body: {},
        }));
        return { message: `Queued test delivery ${(body as { id: string }).id}`, data: body };
      },
    },
    {
      name: 'redeliver', summary: 'Send a delivery again now', args: ['<webhook_id>', '<delivery_id>'],
      async run(ctx) {
        const body = await unwrap(ctx.api.POST('/accounts/projects/{project_id}/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver', {
          params: { path: { project_id: await ctx.project(), webhook_id: arg(ctx, 0, '<webhook_id>'), delivery_id: arg(ctx, 1, '<delivery_id>') } }, body: {},
        }));
        return { message: `Queued delivery ${ctx.args[1]} again`, data: body };
      },
    },
  ],
};

/** `:path` names a file in project storage; anything else is a local path. */
const remote = (value: string) => (value.startsWith(':') ? value.slice(1) : undefined);

const storage: Group = {
  name: 'storage',
  summary: 'Project storage: list, copy both ways, remove (remote paths start with ":")',
  commands: [
    {
      name: 'ls', summary: 'List a folder of project storage', args: ['[:path]'],
      async run(ctx) {
        const path = remote(ctx.args[0] ?? ':') ?? ctx.args[0] ?? '';
        const body = await unwrap(ctx.api.GET('/projects/{project_id}/storage', { params: { path: { project_id: await ctx.project() }, query: path ? { path } : {} } }));
        const rows = body.files.map((f) => ({ ...f, size: f.is_folder ? '-' : bytes(f.size ?? 0), name: f.is_folder ? `${f.name}/` : f.name }));
        return { rows, columns: ['name', 'size', 'updated_at'], data: body };
      },
    },
    {
      name: 'cp', summary: 'Copy a local file to storage (cp FILE :PATH) or a stored file here (cp :PATH FILE), with a progress bar', args: ['<source>', '<destination>'],
      async run(ctx) {
        const [source, destination] = [arg(ctx, 0, '<source>'), arg(ctx, 1, '<destination>')];
        const project_id = await ctx.project();
        const from = remote(source);
        const to = remote(destination);
        if ((from === undefined) === (to === undefined)) throw new UsageError('exactly one of <source> and <destination> must be a storage path, written with a leading ":" (:folder/file.txt)');
        if (to !== undefined) {
          const path = to === '' || to.endsWith('/') ? `${to}${basename(source)}` : to;
          const size = statSync(source).size;
          let sent = 0;
          const counter = new Transform({
            transform(chunk: Buffer, _encoding, done) {
              sent += chunk.length;
              ctx.progress(transferLine(path, sent, size));
              done(null, chunk);
            },
          });
          const body = Readable.toWeb(createReadStream(source).pipe(counter)) as unknown as ReadableStream<Uint8Array>;
          const result = await unwrap(ctx.api.POST('/projects/{project_id}/storage/upload', {
            params: { path: { project_id }, query: { path } },
            body: body as never,
            bodySerializer: (b: unknown) => b as never,
            headers: { 'content-type': 'application/octet-stream', 'content-length': String(size) },
            duplex: 'half',
          } as never));
          ctx.progress(`${path}  ${bytes(size)}  done`, true);
          return { message: `Uploaded ${source} to :${(result as { path: string }).path}`, data: result };
        }
        const { data, error, response } = await ctx.api.GET('/projects/{project_id}/storage/download', { params: { path: { project_id }, query: { path: from! } }, parseAs: 'stream' });
        if (error !== undefined || !response.ok || !data) return unwrap(Promise.resolve({ data: undefined, error: error ?? {}, response })) as never;
        const total = Number(response.headers.get('content-length') ?? 0);
        let received = 0;
        const target = destination.endsWith('/') ? `${destination}${basename(from!)}` : destination;
        await pipeline(Readable.fromWeb(data as never), new Transform({
          transform(chunk: Buffer, _encoding, done) {
            received += chunk.length;
            ctx.progress(transferLine(from!, received, total));
            done(null, chunk);
          },
        }), createWriteStream(target));
        ctx.progress(`${from}  ${bytes(received)}  done`, true);
        return { message: `Downloaded :${from} to ${target}`, data: { path: from, file: target, size: received } };
      },
    },
    {
      name: 'rm', summary: 'Remove a file from storage', args: ['<:path>'],
      async run(ctx) {
        const path = remote(arg(ctx, 0, '<:path>')) ?? ctx.args[0]!;
        await unwrap(ctx.api.DELETE('/projects/{project_id}/storage', { params: { path: { project_id: await ctx.project() }, query: { path } } }));
        return { message: `Removed :${path}` };
      },
    },
  ],
};

const FILTERS: Record<string, Option> = {
  actor: { type: 'string', description: 'Only entries of this actor (a user\'s or API key\'s id)', placeholder: 'ID' },
  action: { type: 'string', description: 'Only this action (room.create), or every action on a type (room.*)', placeholder: 'ACTION' },
  target: { type: 'string', description: 'Only entries whose target has this id', placeholder: 'ID' },
  outcome: { type: 'string', description: 'Only succeeded, refused or failed entries', placeholder: 'OUTCOME' },
  since: { type: 'string', description: 'Only entries at or after this time (ISO 8601)', placeholder: 'TIME' },
  until: { type: 'string', description: 'Only entries before this time (ISO 8601)', placeholder: 'TIME' },
  limit: { type: 'string', description: 'Most entries, newest first (default 100; 0 for all)', placeholder: 'N' },
  jsonl: { type: 'boolean', description: 'Print one JSON entry per line, for log collectors (docs/audit-log.md)' },
};

const audit: Group = {
  name: 'audit',
  summary: 'The project\'s audit log: who did what, when, with which credential',
  commands: [
    {
      name: 'list', summary: 'List audit entries, newest first, filtered; --jsonl exports them', options: FILTERS,
      async run(ctx) {
        const limit = str(ctx, 'limit') === undefined ? 100 : Number(str(ctx, 'limit'));
        if (!Number.isInteger(limit) || limit < 0) throw new UsageError('--limit takes a whole number (0 for all)');
        const outcome = str(ctx, 'outcome');
        if (outcome !== undefined && !['succeeded', 'refused', 'failed'].includes(outcome)) throw new UsageError('--outcome is succeeded, refused or failed');
        const filters = Object.fromEntries(['actor', 'action', 'target', 'outcome', 'since', 'until'].flatMap((name) => (str(ctx, name) === undefined ? [] : [[name, str(ctx, name)]])));
        const project = await ctx.project();
        const entries: Record<string, unknown>[] = [];
        let token: string | undefined;
        do {
          const pageSize = limit === 0 ? 1000 : Math.min(1000, limit - entries.length);
          const page = await unwrap(ctx.api.GET('/accounts/projects/{project_id}/audit-log', {
            params: { path: { project_id: project }, query: { ...filters, page_size: pageSize, ...(token ? { continuation_token: token } : {}) } as never },
          }));
          entries.push(...page.entries);
          token = page.continuation_token ?? undefined;
        } while (token && (limit === 0 || entries.length < limit));
        if (ctx.options.jsonl) return { message: entries.map((entry) => JSON.stringify(entry)).join('\n'), data: entries };
        const rows = entries.map((e) => {
          const { actor, target } = e as { actor: { type: string; name: string | null; id: string | null }; target: { type: string | null; id: string | null } };
          return { at: e.at, actor: `${actor.type}:${actor.name ?? actor.id ?? ''}`, action: e.action, target: target.id ?? '', outcome: e.outcome, client: e.client_address ?? '' };
        });
        return { rows, columns: ['at', 'actor', 'action', 'target', 'outcome', 'client'], data: entries };
      },
    },
  ],
};

export const GROUPS: readonly Group[] = [projects, members, rooms, apiKeys, oauthClients, webhooks, storage, audit];

const COMMON_OPTIONS: Record<string, Option> = {
  server: { type: 'string', description: 'The Atrium server (default: ATRIUM_URL, else the one you are signed in to)', placeholder: 'URL' },
  json: { type: 'boolean', description: 'Print JSON instead of a table' },
  help: { type: 'boolean', description: 'Show this help' },
};
const PROJECT_OPTION: Option = { type: 'string', description: 'The project (default: ATRIUM_PROJECT, else your only project)', placeholder: 'ID' };

function optionsOf(command: Command): Record<string, Option> {
  return { ...(command.noProject ? {} : { project: PROJECT_OPTION }), ...command.options, ...COMMON_OPTIONS };
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
    `Run \`atrium ${group.name} <command> --help\` for a command's options.`,
  ].join('\n');
}

export function commandHelp(group: Group, command: Command): string {
  return [
    `Usage: atrium ${group.name} ${command.name}${command.args?.length ? ` ${command.args.join(' ')}` : ''} [options]`,
    '',
    `${command.summary}.`,
    '',
    'Options:',
    ...Object.entries(optionsOf(command)).map(([name, option]) => optionLine(name, option)),
  ].join('\n');
}

/** Runs `atrium <group> <command> …`; returns the exit code. */
export async function runGroup(group: Group, argv: string[], io: CommandIo = processIo()): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    (name === undefined ? io.err : io.out).write(`${groupHelp(group)}\n`);
    return name === undefined ? 2 : 0;
  }
  const command = group.commands.find((c) => c.name === name);
  if (!command) {
    io.err.write(`atrium: unknown ${group.name} command ${JSON.stringify(name)}\n\n${groupHelp(group)}\n`);
    return 2;
  }
  const spec = optionsOf(command);
  let parsed;
  try {
    parsed = parseArgs({
      args: rest, allowPositionals: true, strict: true,
      options: Object.fromEntries(Object.entries(spec).map(([key, o]) => [key, { type: o.type, ...(o.multiple ? { multiple: true } : {}) } satisfies ParseArgsOptionDescriptor])),
    });
  } catch (error) {
    io.err.write(`atrium: ${(error as Error).message}\n\n${commandHelp(group, command)}\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.out.write(`${commandHelp(group, command)}\n`);
    return 0;
  }
  let server = '';
  try {
    server = resolveServer(values.server as string | undefined, io.env);
    const api = apiClientFor(server, io.env);
    const tty = Boolean(io.err.isTTY);
    const ctx: Context = {
      api, server, args: positionals, options: values as Context['options'],
      async project() {
        const chosen = (values.project as string | undefined) ?? io.env.ATRIUM_PROJECT;
        if (chosen) return chosen;
        const { projects: mine } = await unwrap(api.GET('/accounts/projects'));
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
    const result = await command.run(ctx);
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
  }
}
