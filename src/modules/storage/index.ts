// Project storage: files in the blob store, and the events their changes emit.
import type { Module } from '../../module.ts';
import { fileDeleted, fileUpdated } from './events.ts';
import { storageRoutes } from './routes.ts';

export const storageModule: Module = {
  name: 'storage',
  routes: storageRoutes,
  events: [fileUpdated, fileDeleted],
};
