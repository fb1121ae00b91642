// Projects, their settings and members; the membership lookups every project route relies on.
import type { Module } from '../../platform/http/module.ts';
import { projectRoutes } from './routes.ts';
import { memberships } from './service.ts';

export const projectsModule: Module = { name: 'projects', routes: projectRoutes, memberships };
