// Project storage: files in the blob store, and the events their changes emit.
import { fixtureSuffix, type Module } from '../../module.ts';
import { fileDeleted, fileUpdated } from './events.ts';
import { storageRoutes } from './routes.ts';

export const storageModule: Module = {
  name: 'storage',
  routes: storageRoutes,
  events: [fileUpdated, fileDeleted],
  fixtures: [{
    provides: ['path'],
    async create(client) {
      const path = `fixtures/file-${fixtureSuffix()}.txt`;
      await client.request('POST', `/projects/${client.projectId}/storage/upload?path=${encodeURIComponent(path)}`, { bytes: 'fixture' });
      return { path };
    },
  }],
};
