// The audit log: reading a project's entries (the platform writes them with every change).
import type { Module } from '../../module.ts';
import { auditLogRoutes } from './routes.ts';

export const auditLogModule: Module = {
  name: 'audit-log',
  routes: auditLogRoutes,
};
