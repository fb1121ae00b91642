// The audit log's entries as the API shows them, and the filters of its list.
import { Type } from 'typebox';
import { PageTokenQuery, TokenPageOf } from '../../platform/http/lists.ts';
import { AuditEntryView } from '../../platform/audit/view.ts';

const Filter = (description: string) => Type.Optional(Type.String({ minLength: 1, maxLength: 200, description }));

export const AuditQuery = Type.Object({
  ...PageTokenQuery,
  actor: Filter('Only entries of this actor (a user\'s or API key\'s id)'),
  action: Filter('Only this action (`room.create`), or every action on a type (`room.*`)'),
  target: Filter('Only entries whose target has this id'),
  target_type: Filter('Only entries whose target is of this type'),
  outcome: Type.Optional(AuditEntryView.properties.outcome),
  since: Type.Optional(Type.String({ format: 'date-time', description: 'Only entries at or after this time' })),
  until: Type.Optional(Type.String({ format: 'date-time', description: 'Only entries before this time' })),
});

export const AuditList = TokenPageOf('entries', AuditEntryView);
