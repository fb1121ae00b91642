// Shares: links into one room, with their own grants and expiry.
import type { Module } from '../../module.ts';
import { shareRoutes } from './routes.ts';

export const sharesModule: Module = {
  name: 'shares',
  routes: shareRoutes,
};
