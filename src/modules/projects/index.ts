// Projects, their settings and members; the membership lookups every project route relies on.
import type { Module } from '../../module.ts';
import { invitationRoutes } from './invitations-routes.ts';
import { projectRoutes } from './routes.ts';
import { memberships } from './service.ts';

export const projectsModule: Module = {
  name: 'projects',
  routes: (app, ctx) => {
    projectRoutes(app, ctx);
    invitationRoutes(app, ctx);
  },
  memberships,
  fixtures: [{
    provides: ['user_id'],
    async create(client) {
      const user = await client.newUser();
      await client.request('POST', `/accounts/projects/${client.projectId}/users`, { json: { user_id: user.id, roles: ['member'] } });
      return { user_id: user.id };
    },
  }, {
    provides: ['invitation_id'],
    async create(client) {
      const response = await client.request<{ invitation: { id: string } }>('POST', `/accounts/projects/${client.projectId}/users`, { json: { email: `invitee-${crypto.randomUUID()}@example.com`, roles: ['member'] } });
      return { invitation_id: response.invitation.id };
    },
  }],
};
