// Resource policies: role bindings on one resource, for every resource type a module declares.
import type { Module } from '../../module.ts';
import { policyRoutes } from './routes.ts';

export const policiesModule: Module = {
  name: 'policies',
  routes: policyRoutes,
  fixtures: [{
    provides: ['resource_type', 'resource_id'],
    needs: ['room_id'],
    create: async (_client, have) => ({ resource_type: 'room', resource_id: have.room_id! }),
  }],
};
