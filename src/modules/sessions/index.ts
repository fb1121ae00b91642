// Room sessions as room servers report them, and the events their start and end emit.
import type { Module } from '../../platform/http/module.ts';
import { roomEnded, roomStarted } from './events.ts';
import { sessionRoutes } from './routes.ts';

export const sessionsModule: Module = { name: 'sessions', routes: sessionRoutes, events: [roomStarted, roomEnded] };
