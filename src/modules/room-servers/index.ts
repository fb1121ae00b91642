// The read path of room servers: what one room runs, needs and receives.
import type { Module } from '../../module.ts';
import { roomServerRoutes } from './routes.ts';

export const roomServersModule: Module = {
  name: 'room-servers',
  routes: roomServerRoutes,
};
