// Resource policies: role bindings on one resource, for every resource type a module declares; the
// platform reads them (policyBindings) when it decides what a caller may do.
import type { Module } from '../../module.ts';
import { policyRoutes } from './routes.ts';
import { policyBindings } from './service.ts';

export const policiesModule: Module = {
  name: 'policies',
  routes: policyRoutes,
  policyBindings,
};
