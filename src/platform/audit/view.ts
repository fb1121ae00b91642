// An audit entry as readers see it: the API's list, the CLI's export, and the `audit.recorded`
// event webhooks receive (the same shape everywhere, so a log collector fed by either reads one).
import { Type, type Static } from 'typebox';
import { defineEvent } from '../events/catalogue.ts';
import { Timestamp, Uuid } from '../http/schemas.ts';
import type { AuditRow } from './table.ts';

const Outcome = Type.Union([Type.Literal('succeeded'), Type.Literal('refused'), Type.Literal('failed')], { description: '`succeeded`, `refused` (by the authority check) or `failed` (a failed sign-in)' });

const Text = (description: string) => Type.Union([Type.String(), Type.Null()], { description });

export const AuditEntryView = Type.Object({
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

export type AuditEntryView = Static<typeof AuditEntryView>;

/** A project's entry, as a webhook event: written by the statement that writes the entry. */
export const auditRecorded = defineEvent('audit.recorded', AuditEntryView, {
  description: 'An entry was written to the project\'s audit log: a change through the API, or a refusal (docs/audit-log.md)',
});

export function entryView(row: Omit<AuditRow, 'seq'>): AuditEntryView {
  return {
    id: row.id,
    at: row.at.toISOString(),
    project_id: row.projectId,
    actor: { type: row.actorType, id: row.actorId, name: row.actorName, credential_kind: row.credentialKind, credential_id: row.credentialId, oauth_client_id: row.oauthClientId },
    action: row.action,
    target: { type: row.targetType, id: row.targetId },
    outcome: row.outcome as AuditEntryView['outcome'],
    reason: row.reason,
    request_id: row.requestId,
    client_address: row.clientAddress,
    user_agent: row.userAgent,
  };
}
