// Resource policies: role bindings on one resource, for every resource type a module declares.
import type { Module } from '../../module.ts';
import { policyRoutes } from './routes.ts';

export const policiesModule: Module = {
  name: 'policies',
  routes: policyRoutes,
};
