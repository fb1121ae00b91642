// A webhook receiver for Atrium in a few lines: typed handlers per event, de-duplication on the
// event id (deliveries are at-least-once), and a room.call websocket that echoes what it receives.
// Run: ATRIUM_WEBHOOK_SECRET=<the webhook's secret> npm run webhook-receiver
import { createWebhookReceiver } from '../../src/webhooks-receiver/index.ts';

const seen = new Set<string>();

const receiver = createWebhookReceiver({
  // The secret comes from ATRIUM_WEBHOOK_SECRET; signatures are verified unless `verify: false`.
  port: Number(process.env.PORT ?? 8080),
  host: process.env.HOST, // all interfaces when unset
  handlers: {
    'room.started': ({ id, data }) => {
      // A retry of an event we already handled carries the same id.
      if (id && seen.has(id)) return;
      if (id) seen.add(id);
      console.log(`room ${data.room_name} started${data.room_url ? ` at ${data.room_url}` : ''}`);
    },
    'room.ended': ({ data }) => console.log(`room ${data.room_name} ended`),
    'storage.file.updated': ({ data }) => console.log(`${data.participant_id} wrote ${data.path}`),
    'storage.file.deleted': ({ data }) => console.log(`${data.participant_id} deleted ${data.path}`),
  },
  onCall: ({ data }, socket) => {
    console.log(`call into room ${data.room_name} with arguments ${JSON.stringify(data.arguments ?? {})}`);
    socket.on('message', (message, isBinary) => socket.send(message, { binary: isBinary }));
  },
});

const { url } = await receiver.listen();
console.log(`receiving webhooks on ${url}`);
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void receiver.close());
