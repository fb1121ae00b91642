// A small round-robin HTTP proxy in front of several instances, like a load balancer: each request
// goes to the next instance in turn, with the client it names appended as X-Forwarded-For — or,
// when it names none, with no forwarding header at all, as a default `proxy_pass` sends it.
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RoundRobin {
  url: string;
  server: Server;
  /** Requests answered by each instance, by its index. */
  hits: number[];
  /** Every request, in order: which instance it went to. */
  log: { instance: number; method: string; path: string }[];
  close(): Promise<void>;
}

export function roundRobin(targets: () => string[], clientIp: () => string | undefined): Promise<RoundRobin> {
  const hits: number[] = [];
  const log: RoundRobin['log'] = [];
  let next = 0;
  const server = createServer((req, res) => {
    const list = targets();
    const index = next++ % list.length;
    hits[index] = (hits[index] ?? 0) + 1;
    log.push({ instance: index, method: req.method ?? '', path: req.url ?? '' });
    const target = new URL(list[index]!);
    const client = clientIp();
    const headers = client === undefined ? req.headers : { ...req.headers, 'x-forwarded-for': client };
    const upstream = request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers, timeout: 30_000 }, (answer) => {
      res.writeHead(answer.statusCode!, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => {
      res.statusCode = 502;
      res.end();
    });
    req.pipe(upstream);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    server,
    hits,
    log,
    close: () => new Promise<void>((done) => {
      server.closeAllConnections();
      server.close(() => done());
    }),
  })));
}
