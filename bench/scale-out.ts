// Scale-out scenarios of `npm run bench` (run by bench/run.ts), on PostgreSQL:
//
// 1. The authenticated room read (the core scenario) against one instance and against three
//    instances on the same database, side by side. For three, autocannon spreads its connections
//    over the three in turn, as a load balancer would, with no proxy process in between. On a
//    machine with fewer cores than instances plus database plus load generator the ratio shows the
//    overhead of more processes (caches, pools, background polling), not a speed-up.
// 2. Project storage throughput for a 10 MiB file, upload and download, on the filesystem store and
//    on an S3-compatible store (s3rver, a local child process writing to disk): what the bucket
//    costs against local files.
import { randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import {
  freePort, makeTempDir, removeTempDir, repoRoot, spawnChild, stopChild, waitReady,
  type AtriumProcess, type BenchContext, type ScenarioResult,
} from './lib.ts';

const ROOM = 'scale-room';
/** A multiple of three, so that each of three instances gets as many connections. */
const READ_CONNECTIONS = 48;
const FILE_BYTES = 10 * 1024 * 1024;
const FILE_CONNECTIONS = 4;
const BUCKET = 'atrium-bench';
/** Instances on one database share the key that encrypts stored secrets (and signing keys). */
const SECRET_KEY = Buffer.alloc(32, 5).toString('base64');

async function roomReads(context: BenchContext): Promise<{ one: ScenarioResult; three: ScenarioResult }> {
  const env = { ATRIUM_SECRET_KEY: SECRET_KEY };
  const first = await context.startAtrium('postgres', env);
  const others: AtriumProcess[] = [];
  try {
    others.push(await context.startAtrium('postgres', env, first), await context.startAtrium('postgres', env, first));
    const { project_id: projectId, api_key: apiKey } = first.tenant;
    const rooms = `/accounts/projects/${projectId}/rooms`;
    const auth = { authorization: `Bearer ${apiKey}` };
    const created = await fetch(`${first.url}${rooms}`, {
      method: 'POST', headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ name: ROOM, metadata: { topic: 'benchmark', capacity: 50 }, annotations: { team: 'bench' } }),
    });
    if (created.status !== 201) throw new Error(`creating the room failed: ${created.status} ${await created.text()}`);
    const all = [first, ...others];
    for (const instance of all) {
      const probe = await fetch(`${instance.url}${rooms}/${ROOM}`, { headers: auth });
      if (probe.status !== 200) throw new Error(`room read on ${instance.url}: ${probe.status} ${await probe.text()}`);
    }
    const scenario = { path: `${rooms}/${ROOM}`, headers: auth, connections: READ_CONNECTIONS };
    const [one, three] = await context.measureSideBySide([
      { url: first.url, scenario: { ...scenario, name: 'GET room, one instance', pid: first.pid } },
      { url: all.map((i) => i.url), scenario: { ...scenario, name: 'GET room, three instances (connections in turn)', pid: all.map((i) => i.pid) } },
    ]);
    return { one: one!, three: three! };
  } finally {
    for (const instance of others) await instance.stop();
    await first.stop();
  }
}

/** s3rver as a child process, so that it does not share the load generator's event loop. */
async function startS3(): Promise<{ endpoint: string; pid: number; stop(): Promise<void> }> {
  const dir = makeTempDir('atrium-bench-s3-');
  const port = await freePort();
  const child = spawnChild([process.execPath, join(repoRoot, 'node_modules', 's3rver', 'bin', 's3rver.js'), '-d', dir, '-a', '127.0.0.1', '-p', String(port), '-s', '--configure-bucket', BUCKET], process.env, { underTest: false });
  const endpoint = `http://127.0.0.1:${port}`;
  await waitReady(child, `${endpoint}/${BUCKET}`, 's3rver');
  return {
    endpoint,
    pid: child.pid!,
    async stop() {
      await stopChild(child);
      removeTempDir(dir);
    },
  };
}

async function fileThroughput(context: BenchContext, store: 'filesystem' | 'S3 (s3rver)', env: Record<string, string>, extraPid?: number): Promise<ScenarioResult[]> {
  const atrium = await context.startAtrium('postgres', env);
  try {
    const { project_id: projectId, api_key: apiKey } = atrium.tenant;
    const auth = { authorization: `Bearer ${apiKey}` };
    const body = randomBytes(FILE_BYTES * 3 / 4).toString('base64');
    const storage = `/projects/${projectId}/storage`;
    const seeded = await fetch(`${atrium.url}${storage}/upload?path=bench/read.bin`, { method: 'POST', headers: { ...auth, 'content-type': 'application/octet-stream' }, body });
    if (seeded.status !== 200) throw new Error(`${store}: upload failed: ${seeded.status} ${await seeded.text()}`);
    const pid = extraPid === undefined ? atrium.pid : [atrium.pid, extraPid];
    return await context.measureSideBySide([
      {
        url: atrium.url,
        scenario: {
          name: `upload 10 MiB, ${store}`, method: 'POST', path: `${storage}/upload?path=bench/write.bin`,
          headers: { ...auth, 'content-type': 'application/octet-stream' }, body, pid, connections: FILE_CONNECTIONS,
        },
      },
      { url: atrium.url, scenario: { name: `download 10 MiB, ${store}`, path: `${storage}/download?path=bench/read.bin`, headers: auth, pid, connections: FILE_CONNECTIONS } },
    ]);
  } finally {
    await atrium.stop();
  }
}

/** From the request count, not the rounded req/s: at one or two files a second that rounding is coarse. */
const mibPerSecond = (r: ScenarioResult) => Math.round((r.requests * FILE_BYTES) / 2 ** 20 / (r.seconds || 1) * 10) / 10;

export async function run(context: BenchContext): Promise<object> {
  if (!context.engines.includes('postgres')) return { skipped: 'PostgreSQL is not available' };
  context.log('scale-out: room reads, one vs three instances');
  const { one, three } = await roomReads(context);
  const ratio = Math.round((three.rps / (one.rps || 1)) * 100) / 100;
  const load = `1-minute load average ${one.load[0]} → ${one.load[1]} on ${availableParallelism()} CPUs`;

  context.log('scale-out: 10 MiB files, filesystem');
  const files = await fileThroughput(context, 'filesystem', {});
  const s3 = await startS3();
  try {
    context.log('scale-out: 10 MiB files, S3 (s3rver)');
    files.push(...await fileThroughput(context, 'S3 (s3rver)', {
      ATRIUM_S3_BUCKET: BUCKET, ATRIUM_S3_ENDPOINT: s3.endpoint, ATRIUM_S3_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER',
    }, s3.pid));
  } finally {
    await s3.stop();
  }
  const [fsUp, fsDown, s3Up, s3Down] = files as [ScenarioResult, ScenarioResult, ScenarioResult, ScenarioResult];
  return {
    scenarios: [one, three, ...files],
    ratio,
    mibPerSecond: Object.fromEntries(files.map((r) => [r.name, mibPerSecond(r)])),
    notes: `Room read, three instances against one: **${ratio}×** the requests per second (${three.rps} against ${one.rps}), `
      + `${READ_CONNECTIONS} connections either way, all on one PostgreSQL, measured side by side (${load}); `
      + 'the CPU column of the three-instance row adds up the three processes. '
      + 'On a machine with few cores this shows what more processes cost, not a speed-up: the instances, PostgreSQL and autocannon '
      + 'share the same CPUs, so a third instance only adds work (its own caches, pool and background polling). Scaling out '
      + 'pays when each instance has cores of its own.\n\n'
      + `10 MiB files (${FILE_CONNECTIONS} connections, the same file uploaded over and over, or downloaded): filesystem `
      + `${mibPerSecond(fsUp)} MiB/s up, ${mibPerSecond(fsDown)} MiB/s down; S3 (s3rver child process, writing to the same disk) `
      + `${mibPerSecond(s3Up)} MiB/s up, ${mibPerSecond(s3Down)} MiB/s down. The S3 rows' CPU column adds s3rver's CPU to Atrium's. `
      + 'A real bucket is further away than a local s3rver: expect its latency, not its CPU, to dominate.',
  };
}
