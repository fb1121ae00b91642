// Room services scenario of `npm run bench` (run by bench/run.ts): what a room server reads when a
// room starts, `GET …/rooms/{room}/server/services`, for a room with 50 services (25 of the project,
// 25 of the room, each made from a ServiceTemplate with one plain and one obscure variable, so every
// spec is sealed and decrypted per read), side by side with a bare route doing the same two selects
// (bench/services-bare.ts). Target: ≥ 40 % of the bare route's req/s on PostgreSQL.
import { join } from 'node:path';
import {
  cleanEnv, freePort, makeTempDir, removeTempDir, repoRoot, spawnChild, stopChild, waitReady,
  type BenchContext, type Engine, type Scenario, type ScenarioResult,
} from './lib.ts';

const ROOM = 'services-room';
const PER_SCOPE = 25;
const TARGET_RATIO = 0.4;

const TEMPLATE = `
version: v1
kind: ServiceTemplate
metadata:
  name: "{{ name }}"
  description: A service of the benchmark
  annotations: { team: bench }
variables:
  - name: name
  - name: tag
    enum: ["1.0", "2.0"]
  - name: api_key
    obscure: true
agents:
  - name: "{{ name }}-agent"
    channels: { messaging: [{ protocol: meshagent.agent-message.v1 }] }
ports:
  - num: 8080
    type: http
    endpoints:
      - path: /agent
        meshagent: { identity: "{{ name }}-agent" }
container:
  image: "ghcr.io/example/worker:{{ tag }}"
  command: "worker --name {{ name }}"
  environment:
    - name: LOG_LEVEL
      value: info
    - name: API_KEY
      value: "{{ api_key }}"
  storage:
    room: [{ path: /data }]
`;

async function api(url: string, token: string, method: string, path: string, json?: unknown): Promise<any> {
  const response = await fetch(`${url}${path}`, { method, headers: { authorization: `Bearer ${token}`, ...(json ? { 'content-type': 'application/json' } : {}) }, body: json ? JSON.stringify(json) : null });
  const body = await response.json();
  if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(body)}`);
  return body;
}

async function startBareServices(engine: Engine, databaseUrl: string | undefined, seed: unknown) {
  const port = await freePort();
  const dir = engine === 'pglite' ? makeTempDir('atrium-bench-services-bare-') : undefined;
  const env = cleanEnv({ BARE_PORT: String(port), BARE_SEED: JSON.stringify(seed), BARE_POOL_SIZE: '20', ...(engine === 'postgres' ? { BARE_DATABASE_URL: databaseUrl! } : { BARE_PGLITE_DIR: dir! }) });
  const child = spawnChild([process.execPath, join(repoRoot, 'bench', 'services-bare.ts')], env);
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitReady(child, `${url}/healthz`, `bare services server (${engine})`);
  } catch (error) {
    await stopChild(child);
    if (dir) removeTempDir(dir);
    throw error;
  }
  return { url, pid: child.pid!, stop: async () => { await stopChild(child); if (dir) removeTempDir(dir); } };
}

export async function run(context: BenchContext): Promise<{ scenarios: (ScenarioResult & { engine: Engine; ratio: number })[]; notes: string }> {
  const scenarios: (ScenarioResult & { engine: Engine; ratio: number })[] = [];
  const notes: string[] = [];
  for (const engine of context.engines) {
    context.log(`services: ${engine}: starting atrium`);
    const atrium = await context.startAtrium(engine);
    try {
      const { project_id: projectId, api_key: apiKey } = atrium.tenant;
      const project = `/accounts/projects/${projectId}`;
      const room = await api(atrium.url, apiKey, 'POST', `${project}/rooms`, { name: ROOM });
      for (let i = 0; i < PER_SCOPE; i++) {
        const values = (name: string) => ({ name, tag: i % 2 ? '1.0' : '2.0', api_key: `sk-bench-${i}` });
        await api(atrium.url, apiKey, 'POST', `${project}/services`, { template: TEMPLATE, values: values(`project-${i}`) });
        await api(atrium.url, apiKey, 'POST', `${project}/rooms/${ROOM}/services`, { template: TEMPLATE, values: values(`room-${i}`) });
      }
      // What a room server is given: a key with the room_server role only.
      const roomServerKey = (await api(atrium.url, apiKey, 'POST', `${project}/api-keys`, { name: 'bench room server', roles: ['room_server'] })).value;
      const read = await api(atrium.url, roomServerKey, 'GET', `${project}/rooms/${ROOM}/server/services`);
      if (read.services.length !== 2 * PER_SCOPE) throw new Error(`expected ${2 * PER_SCOPE} services, got ${read.services.length}`);

      const seed = {
        project: { id: projectId, name: 'bench' },
        room: { id: room.id, name: ROOM },
        services: read.services.map((s: { id: string; scope: string; spec: { metadata: { name: string } } }) => ({ id: s.id, room_id: s.scope === 'room' ? room.id : null, name: s.spec.metadata.name, spec: s.spec })),
      };
      context.log(`services: ${engine}: starting the bare server`);
      const bare = await startBareServices(engine, atrium.databaseUrl, seed);
      try {
        const planned: [string, Scenario][] = [
          [bare.url, { name: 'bare: select room + 50 services (no auth)', path: `/rooms/${projectId}/${ROOM}/services`, pid: bare.pid }],
          [atrium.url, { name: 'GET room server services (50, rendered)', path: `${project}/rooms/${ROOM}/server/services`, headers: { authorization: `Bearer ${roomServerKey}` }, pid: atrium.pid }],
          [atrium.url, { name: "GET a room's own services (25, admin list)", path: `${project}/rooms/${ROOM}/services`, headers: { authorization: `Bearer ${apiKey}` }, pid: atrium.pid }],
        ];
        for (const [url, scenario] of planned) {
          const probe = await fetch(`${url}${scenario.path}`, { headers: scenario.headers ?? {} });
          if (probe.status !== 200) throw new Error(`${scenario.name}: expected 200, got ${probe.status} ${await probe.text()}`);
        }
        const results = await context.measureSideBySide(planned.map(([url, scenario]) => ({ url, scenario })));
        const base = results[0]!.rps || 1;
        for (const r of results) scenarios.push({ ...r, engine, ratio: Math.round((r.rps / base) * 1000) / 1000 });
        const ratio = results[1]!.rps / base;
        notes.push(`${engine}: room server services read at ${(ratio * 100).toFixed(0)} % of bare${engine === 'postgres' ? ` (target ≥ ${TARGET_RATIO * 100} %: ${ratio >= TARGET_RATIO ? 'met' : 'NOT met'})` : ''}, p99 ${results[1]!.p99} ms against ${results[0]!.p99} ms`);
      } finally {
        await bare.stop();
      }
    } finally {
      await atrium.stop();
    }
  }
  notes.push(`Each of the 50 services is rendered from a template with an obscure variable, so Atrium decrypts 50 sealed specs (AES-256-GCM) per read, and keeps a room service that shadows a project one; the bare route returns the stored rows as they are. Responses are about ${PER_SCOPE * 2} specs of ~0.6 KiB.`);
  return { scenarios, notes: notes.join('\n\n') };
}
