// Operational endpoints: liveness, readiness, metrics, the OpenAPI document and public keys.
import type { Module } from '../../platform/http/module.ts';
import { systemRoutes } from './routes.ts';

export const systemModule: Module = { name: 'system', routes: systemRoutes };
