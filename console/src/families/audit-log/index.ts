import { lazyPage, type Family } from '../family.ts';

export const auditLog: Family = {
  id: 'audit-log',
  label: 'Audit log',
  path: 'audit-log',
  needs: 'audit_reader',
  routes: [lazyPage('audit-log', () => import('./AuditLog.tsx'))],
};
