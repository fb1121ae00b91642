// First-run setup: the first admin and project, from the link printed on an empty database.
import type { Module } from '../../module.ts';
import { setupRoutes } from './routes.ts';

export const setupModule: Module = { name: 'setup', routes: setupRoutes };
