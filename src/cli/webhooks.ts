// `atrium webhooks listen`: the receiver helper as a command for local development. Every verified
// event becomes one JSON line on stdout (pipe it to jq, grep, a file); anything else goes to stderr.
import { parseArgs } from 'node:util';
import { createWebhookReceiver, type WebhookEvent } from '../webhooks-receiver/index.ts';

export const WEBHOOKS_USAGE = `Usage: atrium webhooks listen [--port 8080] [--host 127.0.0.1] [--secret S] [--no-verify] [--path /webhook]

Receives webhook deliveries and prints each verified event as a JSON line on stdout.
The signing secret comes from --secret or env ATRIUM_WEBHOOK_SECRET (preferred: arguments show in
process lists). --no-verify accepts unsigned deliveries, for local development only. --port 0 picks
a free port. A websocket room.call is printed, then closed: this command does not join rooms.`;

export async function webhooksCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  // Everything but `listen` is an API command of the webhooks group.
  if (sub !== 'listen') {
    const { GROUPS, runGroup, groupHelp } = await import('./groups.ts');
    const group = GROUPS.find((g) => g.name === 'webhooks')!;
    if (sub === undefined || sub === 'help' || sub === '--help' || sub === '-h') {
      (sub === undefined ? process.stderr : process.stdout).write(`${groupHelp(group)}\n  listen (see below)\n\n${WEBHOOKS_USAGE}\n`);
      return sub === undefined ? 2 : 0;
    }
    return runGroup(group, args);
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(`${WEBHOOKS_USAGE}\n`);
    return 0;
  }
  const { values } = parseArgs({
    args: rest,
    options: {
      port: { type: 'string', default: '8080' },
      host: { type: 'string', default: '127.0.0.1' },
      secret: { type: 'string' },
      verify: { type: 'boolean', default: true },
      path: { type: 'string', default: '/webhook' },
    },
    allowNegative: true,
    strict: true,
  });
  const port = Number(values.port);
  if (!/^\d{1,5}$/.test(values.port) || port > 65535) {
    process.stderr.write(`atrium: --port must be a port number, got ${JSON.stringify(values.port)}\n`);
    return 2;
  }

  const print = (event: WebhookEvent, transport: 'post' | 'websocket') => {
    const line = {
      received_at: new Date().toISOString(),
      transport,
      event: event.type,
      id: event.id ?? null,
      timestamp: event.timestamp ?? null,
      attempt: event.attempt ?? null,
      data: event.data,
      payload: event.payload,
    };
    process.stdout.write(`${JSON.stringify(line)}\n`);
  };

  if (values.verify && !values.secret && !process.env.ATRIUM_WEBHOOK_SECRET) {
    process.stderr.write('atrium: no webhook secret: pass --secret or set ATRIUM_WEBHOOK_SECRET, or use --no-verify for local development\n');
    return 2;
  }
  let receiver;
  try {
    receiver = createWebhookReceiver({
      secret: values.secret,
      verify: values.verify,
      port,
      host: values.host,
      path: values.path,
      onEvent: (event) => print(event, 'post'),
      onCall: (event, socket) => {
        print(event, 'websocket');
        socket.close(1000, 'received by atrium webhooks listen, which does not join rooms');
      },
      onRejected: (r) => process.stderr.write(`rejected ${r.method} ${r.path}: ${r.status} ${r.code}: ${r.message}\n`),
    });
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
    process.stderr.write(`atrium: ${error.message}\n`);
    return 2;
  }

  let address;
  try {
    address = await receiver.listen();
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code !== 'EADDRINUSE' && code !== 'EACCES' && code !== 'EADDRNOTAVAIL') throw error;
    process.stderr.write(`atrium: cannot listen on ${values.host}:${port}: ${code}\n`);
    return 1;
  }
  process.stderr.write(`atrium webhooks: listening on ${address.url}${values.verify ? '' : ' (signature verification OFF)'}\n`);

  // Handlers stay installed: Ctrl-C reaches this process twice, from the terminal and forwarded by
  // bin/atrium.js, and the second must not kill it before it has closed.
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.on('SIGINT', () => resolve('SIGINT'));
    process.on('SIGTERM', () => resolve('SIGTERM'));
  });
  await receiver.close();
  process.stderr.write(`atrium webhooks: stopped (${signal})\n`);
  return 0;
}
