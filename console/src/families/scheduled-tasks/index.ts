import { lazyPage, type Family } from '../family.ts';

export const scheduledTasks: Family = {
  id: 'scheduled-tasks',
  label: 'Scheduled tasks',
  path: 'scheduled-tasks',
  needs: 'scheduled_task_inventory',
  routes: [
    lazyPage('scheduled-tasks', () => import('./TaskList.tsx')),
    lazyPage('scheduled-tasks/:taskId', () => import('./TaskDetail.tsx')),
  ],
};
