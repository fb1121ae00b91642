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
};
