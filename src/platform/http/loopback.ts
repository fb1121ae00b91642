// "Only from this machine": for what must never be reachable over the network, such as the
// development mailbox, whose mail carries sign-in and password-reset links.
import { BlockList, isIP } from 'node:net';
import type { FastifyRequest } from 'fastify';

const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');

/** True for 127.0.0.0/8, ::1 (IPv4-mapped forms included) and the name `localhost`. */
export function isLoopback(address: string): boolean {
  if (address.toLowerCase() === 'localhost') return true;
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = isIP(bare);
  // BlockList also matches IPv4-mapped IPv6 addresses (::ffff:127.0.0.1) against the IPv4 rule.
  return family !== 0 && loopback.check(bare, family === 4 ? 'ipv4' : 'ipv6');
}

// A proxy on this machine makes every client look local. When proxies are trusted, request.ip is
// the client the proxy names, but a proxy that appends to X-Forwarded-For passes on whatever the
// client claimed first; when they are not, request.ip is the proxy itself. Either way a forwarded
// request cannot prove that it comes from this machine, so it does not count as local.
const FORWARDING_HEADERS = ['forwarded', 'x-forwarded-for', 'x-real-ip'];

/**
 * True when the client (request.ip, by the app's trusted-proxy rule) is loopback and no proxy
 * forwarded the request. A proxy on this machine that adds no forwarding header still passes: on
 * its own this proves nothing, so what it guards also needs a secret.
 */
export function isLoopbackClient(request: FastifyRequest): boolean {
  return isLoopback(request.ip) && FORWARDING_HEADERS.every((name) => request.headers[name] === undefined);
}
