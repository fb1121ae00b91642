// Mailboxes: addresses under the deployment's mail domains, delivering to a queue of a room.
import type { Module } from '../../module.ts';
import { mailboxRoutes } from './routes.ts';

export const mailboxesModule: Module = {
  name: 'mailboxes',
  routes: mailboxRoutes,
};
