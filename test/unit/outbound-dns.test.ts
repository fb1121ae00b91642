// The SSRF guard against names that resolve to several addresses: a name whose answers mix a public
// address with a private one is refused, whichever comes first, both when a URL is registered and
// when a connection is made (the socket may try any of the answers). The resolver is stubbed: names
// under .example.test answer what each test says, everything else goes to the real one.
import assert from 'node:assert/strict';
import dns, { type LookupAddress } from 'node:dns';
import { syncBuiltinESMExports } from 'node:module';
import { after, test } from 'node:test';
import { BlockedAddressError, checkTargetUrl, OutboundClient } from '../../src/platform/http/outbound.ts';

const answers = new Map<string, LookupAddress[]>([
  ['public-then-private.example.test', [{ address: '93.184.215.14', family: 4 }, { address: '127.0.0.1', family: 4 }]],
  ['private-then-public.example.test', [{ address: '10.1.2.3', family: 4 }, { address: '93.184.215.14', family: 4 }]],
  ['public-then-metadata.example.test', [{ address: '2606:4700:4700::1111', family: 6 }, { address: '169.254.169.254', family: 4 }]],
  ['public-then-loopback6.example.test', [{ address: '93.184.215.14', family: 4 }, { address: '::1', family: 6 }]],
  ['mapped.example.test', [{ address: '93.184.215.14', family: 4 }, { address: '::ffff:192.168.0.1', family: 6 }]],
]);

const realLookup = dns.lookup;
const stub = ((hostname: string, options: unknown, callback?: unknown) => {
  const done = (typeof options === 'function' ? options : callback) as (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;
  const all = typeof options === 'object' && options !== null && (options as { all?: boolean }).all === true;
  const found = answers.get(hostname);
  if (!found) return (realLookup as (...args: unknown[]) => void)(hostname, options, callback);
  process.nextTick(() => (all ? done(null, found) : done(null, found[0]!.address, found[0]!.family)));
}) as typeof dns.lookup;
// The guard imports `lookup` by name: syncing the built-in's named exports is what makes it see the stub.
dns.lookup = stub;
syncBuiltinESMExports();
after(() => {
  dns.lookup = realLookup;
  syncBuiltinESMExports();
});

const policy = { allowPrivate: false };

test('registration refuses a name if any of its addresses is private, whatever the order', async () => {
  for (const [name, list] of answers) {
    const problem = await checkTargetUrl(new URL(`https://${name}/hook`), policy);
    const blocked = list.find((a) => a.address !== '93.184.215.14' && a.address !== '2606:4700:4700::1111')!.address;
    assert.ok(problem?.includes(blocked), `${name}: ${problem}`);
  }
});

test('a connection to such a name is refused before any socket opens, whatever the order', async () => {
  const client = new OutboundClient(policy);
  try {
    for (const name of answers.keys()) {
      await assert.rejects(
        client.post(new URL(`http://${name}/hook`), Buffer.from('{}'), { 'content-type': 'application/json' }, { timeoutMs: 2000, excerptBytes: 10 }),
        (error: unknown) => {
          const cause = (error as { cause?: unknown }).cause ?? error;
          assert.ok(error instanceof BlockedAddressError || cause instanceof BlockedAddressError, `${name}: ${String(error)} (${String(cause)})`);
          return true;
        },
      );
    }
  } finally {
    client.close();
  }
});
