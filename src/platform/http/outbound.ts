// Outbound HTTP to URLs that tenants choose (webhooks; the room server's calls use the same client
// with private targets allowed, since the operator names that URL), guarded against server-side
// request forgery: a URL may not point at loopback, private, link-local, shared, multicast or
// reserved addresses, except those the operator allows (all of them, or listed addresses, CIDR
// ranges and host names). The URL is checked when it is registered (literal address, then DNS) and
// again on every connection, after DNS resolution, in the socket's own lookup, so a name that later
// resolves to 127.0.0.1 (DNS rebinding) is refused.
//
// undici is the one outbound HTTP client, and each request Atrium sends itself goes as an
// `HttpExchange` (./exchange.ts) through a dispatcher: here an Agent, for the LLM proxy a Pool per provider. undici never follows
// redirects unless told to, and its connector passes a custom `lookup` to the socket, which is where
// the connect-time check lives. It also costs about a third less CPU per POST than node:http's agent
// (docs/contributing/performance-journal.md).
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions, type LookupOneOptions } from 'node:dns';
import { BlockList, isIP, isIPv4 } from 'node:net';
import { Agent } from 'undici';
import type { PrivateTargets } from '../settings/kinds.ts';
import { HttpExchange } from './exchange.ts';

export interface OutboundPolicy {
  /** Private targets allowed: all (local development), none, or the listed addresses, CIDR ranges and host names. */
  allowPrivate: PrivateTargets;
}

export class BlockedAddressError extends Error {
  readonly code = 'ERR_BLOCKED_ADDRESS';
}

const v4 = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) v4.addSubnet(net, prefix, 'ipv4');

const v6 = new BlockList();
for (const [net, prefix] of [
  ['::', 96], // unspecified, loopback, IPv4-compatible
  ['::ffff:0:0', 96], // IPv4-mapped (checked as IPv4 first)
  ['64:ff9b:1::', 48], // local-use NAT64
  ['100::', 64], // discard
  ['2001::', 32], // Teredo: the IPv4 inside is obfuscated, refuse outright
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // old site-local
  ['ff00::', 8], // multicast
] as const) v6.addSubnet(net, prefix, 'ipv6');

/** Parses an IPv6 literal into 16 bytes. */
function ipv6Bytes(address: string): Uint8Array {
  let text = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const bytes = new Uint8Array(16);
  // A trailing dotted quad (::ffff:1.2.3.4) becomes two hex groups.
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted[1]!.split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, -dotted[1]!.length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') as [string, string] : [text, undefined];
  const headGroups = head ? head.split(':') : [];
  const tailGroups = tail ? tail.split(':') : [];
  const groups = [...headGroups, ...Array(8 - headGroups.length - tailGroups.length).fill('0'), ...tailGroups];
  groups.forEach((g, i) => {
    const n = parseInt(g, 16);
    bytes[i * 2] = n >> 8;
    bytes[i * 2 + 1] = n & 0xff;
  });
  return bytes;
}

const v4Of = (b: Uint8Array, at: number) => `${b[at]}.${b[at + 1]}.${b[at + 2]}.${b[at + 3]}`;
const zero = (b: Uint8Array, from: number, to: number) => b.subarray(from, to).every((x) => x === 0);

/** True for addresses a tenant's URL may not reach unless private targets are allowed. */
export function isBlockedAddress(address: string): boolean {
  if (isIPv4(address)) return v4.check(address, 'ipv4');
  if (isIP(address.replace(/%.*$/, '')) !== 6) return true;
  const b = ipv6Bytes(address);
  // IPv4 embedded in IPv6: mapped (::ffff:a.b.c.d), NAT64 (64:ff9b::a.b.c.d), 6to4 (2002:aabb:ccdd::).
  if (zero(b, 0, 10) && b[10] === 0xff && b[11] === 0xff) return v4.check(v4Of(b, 12), 'ipv4');
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zero(b, 4, 12)) return v4.check(v4Of(b, 12), 'ipv4');
  if (b[0] === 0x20 && b[1] === 0x02) return v4.check(v4Of(b, 2), 'ipv4');
  return v6.check(address.replace(/^\[|\]$/g, '').replace(/%.*$/, ''), 'ipv6');
}

/** The private targets a policy allows, ready to check addresses against. */
class Allowance {
  readonly all: boolean;
  readonly #networks = new BlockList();
  readonly #hosts = new Set<string>();

  constructor(targets: PrivateTargets) {
    this.all = targets === true;
    for (const entry of Array.isArray(targets) ? targets : []) {
      const [address, bits] = entry.split('/') as [string, string | undefined];
      const family = isIP(address);
      if (family === 0) this.#hosts.add(entry.toLowerCase());
      else if (bits === undefined) this.#networks.addAddress(address, family === 4 ? 'ipv4' : 'ipv6');
      else this.#networks.addSubnet(address, Number(bits), family === 4 ? 'ipv4' : 'ipv6');
    }
  }

  /** Whether `host` (a URL's host name, the name looked up) may reach `address`. */
  permits(host: string, address: string): boolean {
    if (this.all || !isBlockedAddress(address) || this.#hosts.has(host.toLowerCase())) return true;
    const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
    return this.#networks.check(bare, isIPv4(bare) ? 'ipv4' : 'ipv6');
  }

  /** Whether `host` is listed by name: whatever it resolves to may be reached. */
  names(host: string): boolean {
    return this.all || this.#hosts.has(host.toLowerCase());
  }
}

const refusal = (what: string, address: string) => `${what} ${address}, a private, loopback or reserved address (not allowed by ATRIUM_WEBHOOKS_ALLOW_PRIVATE)`;

function literalProblem(url: URL, allowance: Allowance): string | undefined {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http or https URL';
  if (!url.hostname) return 'has no host';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) && !allowance.permits(host, host)) return refusal('points at', host);
  return undefined;
}

/** Checks what can be checked without DNS; returns the problem, or undefined. */
export function urlProblem(url: URL, policy: OutboundPolicy): string | undefined {
  return literalProblem(url, new Allowance(policy.allowPrivate));
}

/**
 * The registration check: the literal check, then the name's current DNS answers. A name that does
 * not resolve (yet) is accepted; the connect-time check still applies.
 */
export async function checkTargetUrl(url: URL, policy: OutboundPolicy, timeoutMs = 2000): Promise<string | undefined> {
  const allowance = new Allowance(policy.allowPrivate);
  const literal = literalProblem(url, allowance);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (literal || isIP(host) || allowance.names(host)) return literal;
  const addresses = await Promise.race([
    new Promise<LookupAddress[]>((resolve) => dnsLookup(host, { all: true }, (error, found) => resolve(error ? [] : found))),
    new Promise<LookupAddress[]>((resolve) => setTimeout(() => resolve([]), timeoutMs).unref()),
  ]);
  const bad = addresses.find((a) => !allowance.permits(host, a.address));
  return bad ? refusal('resolves to', bad.address) : undefined;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;
type Lookup = (hostname: string, options: LookupOneOptions | LookupAllOptions, callback: LookupCallback) => void;

/** A socket `lookup` that refuses names resolving to addresses the allowance does not permit. */
function guardedLookup(allowance: Allowance): Lookup {
  return (hostname, options, callback) => dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, []);
    const bad = addresses.find((a) => !allowance.permits(hostname, a.address));
    if (bad) return callback(new BlockedAddressError(`${hostname} resolved to ${bad.address}, a private, loopback or reserved address; refused`), []);
    if ((options as LookupAllOptions).all) return callback(null, addresses);
    const first = addresses[0]!;
    return callback(null, first.address, first.family);
  });
}

export interface OutboundResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The start of the body, at most `excerptBytes`, as text. */
  excerpt: string;
}

export interface PostOptions {
  timeoutMs: number;
  excerptBytes: number;
  signal?: AbortSignal | undefined;
}

export class TimeoutError extends Error {
  readonly code = 'ETIMEDOUT';
}

/** Bytes read from a response before the connection is dropped instead (the rest is not needed). */
const MAX_DRAIN_BYTES = 64 * 1024;

/** A keep-alive dispatcher with the guarded lookup; one per policy, for the life of the process. */
export class OutboundClient {
  readonly #policy: OutboundPolicy;
  readonly #allowance: Allowance;
  readonly #dispatcher: Agent;

  constructor(policy: OutboundPolicy) {
    this.#policy = policy;
    this.#allowance = new Allowance(policy.allowPrivate);
    // Idle connections are closed before the usual 5 s server keep-alive timeout, to avoid reusing
    // one the receiver is closing. Up to 512 per origin, so that a worker running many deliveries
    // to one receiver at once does not queue them behind each other.
    this.#dispatcher = new Agent({
      connections: 512,
      keepAliveTimeout: 4000,
      keepAliveMaxTimeout: 4000,
      connect: this.#allowance.all ? {} : { lookup: guardedLookup(this.#allowance) },
    });
  }

  get policy(): OutboundPolicy {
    return this.#policy;
  }

  /** POSTs `body`; resolves with any HTTP response (redirects included, never followed). */
  async post(url: URL, body: Uint8Array, headers: Record<string, string>, options: PostOptions): Promise<OutboundResponse> {
    const problem = literalProblem(url, this.#allowance);
    if (problem) throw new BlockedAddressError(`The URL ${problem}`);
    if (options.signal?.aborted) throw new Error('aborted');
    const exchange = new HttpExchange(this.#dispatcher, {
      origin: url.origin, path: `${url.pathname}${url.search}`, method: 'POST', headers, body,
    });
    // The request is given up for the caller's signal or at the whole exchange's deadline.
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      exchange.abort(`no complete response within ${options.timeoutMs} ms`);
    }, options.timeoutMs);
    const onAbort = () => exchange.abort('aborted');
    options.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const response = await exchange.answer;
      const excerpt = await readExcerpt(response.body, options.excerptBytes);
      // A body cut short by the deadline or the signal is no answer; one dropped past
      // MAX_DRAIN_BYTES is (its status is what counts).
      if (timedOut || options.signal?.aborted) throw new Error('aborted');
      return { status: response.statusCode, headers: response.headers, excerpt };
    } catch (error) {
      if (timedOut) throw new TimeoutError(`no complete response within ${options.timeoutMs} ms`);
      if (options.signal?.aborted) throw new Error('aborted');
      throw error;
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
    }
  }

  close(): void {
    void this.#dispatcher.destroy();
  }
}

/**
 * Reads a response body, keeping its first `excerptBytes` as text; past MAX_DRAIN_BYTES the
 * connection is dropped rather than read to the end. A body cut short still leaves a response (its
 * status is what counts), so this never rejects.
 */
function readExcerpt(body: NodeJS.ReadableStream & { destroy(): void }, excerptBytes: number): Promise<string> {
  return new Promise((resolve) => {
    const kept: Buffer[] = [];
    let keptBytes = 0;
    let total = 0;
    const done = () => resolve(Buffer.concat(kept).toString('utf8'));
    body.on('data', (chunk: Buffer) => {
      total += chunk.length;
      if (keptBytes < excerptBytes) {
        const part = chunk.subarray(0, excerptBytes - keptBytes);
        kept.push(part);
        keptBytes += part.length;
      }
      if (total > MAX_DRAIN_BYTES) {
        body.destroy();
        done();
      }
    });
    body.on('end', done);
    body.on('close', done);
    body.on('error', done);
  });
}

/** `Retry-After` as milliseconds from now (seconds or an HTTP date); undefined when absent or bad. */
export function retryAfterMs(value: string | string[] | undefined, now: Date): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) return undefined;
  if (/^\s*\d+\s*$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now.getTime());
}
