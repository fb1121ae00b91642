// The audit log of a project: who did what, when, with which credential.
import type { Api } from '../../module.ts';
import type { AppContext } from '../../context.ts';
import { ProjectParams } from '../../platform/http/schemas.ts';
import * as schema from './schema.ts';
import * as service from './service.ts';

const tags = ['Audit log'];

export function auditLogRoutes(app: Api, ctx: AppContext): void {
  app.get('/accounts/projects/:project_id/audit-log', {
    config: { auth: { permission: 'audit_reader' } },
    schema: {
      tags, summary: 'List the project\'s audit log, newest first', params: ProjectParams, querystring: schema.AuditQuery, response: { 200: schema.AuditList },
      description: 'Every state-changing request of the administration API leaves one entry, written with its change; a refusal by the authority check leaves a `refused` entry '
        + 'within seconds. Filters combine; a continuation token carries on with the filters it was given with. docs/audit-log.md lists the actions.',
    },
  }, async (request) => service.listEntries(ctx, request.params.project_id, request.query));
}
