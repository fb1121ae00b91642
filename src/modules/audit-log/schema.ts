// The audit log's entries as the API shows them, and the filters of its list.
import { Type } from 'typebox';
import { PageTokenQuery, TokenPageOf } from '../../platform/http/lists.ts';
import { Timestamp, Uuid } from '../../platform/http/schemas.ts';

const Outcome = Type.Union([Type.Literal('succeeded'), Type.Literal('refused'), Type.Literal('failed')], { description: '`succeeded`, `refused` (by the authority check) or `failed` (a failed sign-in)' });

const Text = (description: string) => Type.Union([Type.String(), Type.Null()], { description });

export const AuditEntry = Type.Object({
  id: Uuid,
  at: Timestamp,
  project_id: Type.Union([Uuid, Type.Null()], { description: 'null for the deployment\'s own events' }),
  actor: Type.Object({
    type: Type.String({ description: '`user`, `api_key`, `participant`, `operator` (a command at the server\'s shell), or `anonymous` (a failed sign-in)' }),
    id: Text('The user\'s or API key\'s id'),
    name: Text('The user\'s email or the key\'s name, as it was then'),
    credential_kind: Text('`api_key`, `user` (a personal access token), `oauth`, `participant`, `session` (the sign-in pages), `setup_token` or `server_host`'),
    credential_id: Text('The credential\'s id (never its value)'),
    oauth_client_id: Text('The OAuth client, for an OAuth access token'),
  }),
  action: Type.String({ description: '`<type>.<action>`: docs/audit-log.md lists every one' }),
  target: Type.Object({ type: Text('The target\'s resource type'), id: Text('The target\'s id, or the name the request gave it') }),
  outcome: Outcome,
  reason: Text('Why it was refused or failed'),
  request_id: Text('The request\'s X-Request-Id'),
  client_address: Text('The client\'s address, through the trusted proxies (ATRIUM_TRUST_PROXY)'),
  user_agent: Text('The client\'s User-Agent'),
});

const Filter = (description: string) => Type.Optional(Type.String({ minLength: 1, maxLength: 200, description }));

export const AuditQuery = Type.Object({
  ...PageTokenQuery,
  actor: Filter('Only entries of this actor (a user\'s or API key\'s id)'),
  action: Filter('Only this action (`room.create`), or every action on a type (`room.*`)'),
  target: Filter('Only entries whose target has this id'),
  target_type: Filter('Only entries whose target is of this type'),
  outcome: Type.Optional(Outcome),
  since: Type.Optional(Type.String({ format: 'date-time', description: 'Only entries at or after this time' })),
  until: Type.Optional(Type.String({ format: 'date-time', description: 'Only entries before this time' })),
});

export const AuditList = TokenPageOf('entries', AuditEntry);
