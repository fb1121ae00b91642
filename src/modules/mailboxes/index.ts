// Mailboxes: addresses under the deployment's mail domains, delivering to a queue of a room.
import { fixtureSuffix, type Module } from '../../module.ts';
import { mailboxRoutes } from './routes.ts';

export const mailboxesModule: Module = {
  name: 'mailboxes',
  routes: mailboxRoutes,
  fixtures: [{
    provides: ['address'],
    needs: ['room_name'],
    async create(client, have) {
      // The walks run with ATRIUM_MAIL_DOMAINS set to the test domain (test/support/service.ts).
      const address = `box-${fixtureSuffix()}@mail.example.test`;
      await client.request('POST', `/accounts/projects/${client.projectId}/mailboxes`, { json: { address, room: have.room_name, queue: 'inbox' } });
      return { address };
    },
  }],
};
