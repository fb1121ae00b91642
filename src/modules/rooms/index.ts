// Rooms of a project and connecting to them.
import type { Module } from '../../platform/http/module.ts';
import { roomRoutes } from './routes.ts';

export const roomsModule: Module = { name: 'rooms', routes: roomRoutes };
