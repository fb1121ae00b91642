// What serving costs around the routes (run by bench/run.ts as the `http` part): the JSON request
// log line, and compressed answers. Side by side in one run, each with one caller (one request at a
// time), whose server CPU per request is the figure the machine's other load moves least:
//   - GET room (the hot path) on a server that logs nothing at `warn` and on one that writes a JSON
//     `info` line per request (the default of a deployment with JSON logs);
//   - the same GET room asking for `br`/`gzip`: below the threshold it must cost nothing;
//   - a page of 1,000 rooms (about 200 KB of JSON) sent as it is, gzip and brotli: the server's CPU
//     for the bytes saved, which the notes give per answer.
import { request } from 'node:http';
import type { BenchContext, Engine, Scenario, ScenarioResult } from './lib.ts';

const ROOMS = 1000;

async function api(url: string, token: string, method: string, path: string, json?: unknown): Promise<any> {
  const response = await fetch(`${url}${path}`, { method, headers: { authorization: `Bearer ${token}`, ...(json ? { 'content-type': 'application/json' } : {}) }, body: json ? JSON.stringify(json) : null });
  const body = await response.json();
  if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(body)}`);
  return body;
}

/** The size of an answer as sent (fetch would decompress it). */
function wireBytes(url: string, headers: Record<string, string>): Promise<{ bytes: number; encoding: string }> {
  return new Promise((resolve, reject) => {
    request(url, { headers }, (response) => {
      let bytes = 0;
      response.on('data', (chunk: Buffer) => { bytes += chunk.length; }).on('end', () => resolve({ bytes, encoding: String(response.headers['content-encoding'] ?? 'identity') }));
    }).on('error', reject).end();
  });
}

export async function run(context: BenchContext): Promise<{ scenarios: (ScenarioResult & { engine: Engine })[]; notes: string }> {
  const engine: Engine = context.engines.includes('postgres') ? 'postgres' : 'pglite';
  const scenarios: (ScenarioResult & { engine: Engine })[] = [];
  const notes: string[] = [];
  context.log(`http: ${engine}: starting two servers, one without request lines and one with JSON request lines`);
  const quiet = await context.startAtrium(engine);
  const logging = await context.startAtrium(engine, { ATRIUM_LOG_LEVEL: 'info', ATRIUM_LOG_FORMAT: 'json' });
  try {
    for (const atrium of [quiet, logging]) {
      const { project_id: projectId, api_key: apiKey } = atrium.tenant;
      await api(atrium.url, apiKey, 'POST', `/accounts/projects/${projectId}/rooms`, { name: 'bench-room', metadata: { topic: 'benchmark', capacity: 50 } });
    }
    const project = `/accounts/projects/${quiet.tenant.project_id}`;
    const auth = { authorization: `Bearer ${quiet.tenant.api_key}` };
    for (let i = 0; i < ROOMS; i += 50) {
      await Promise.all(Array.from({ length: 50 }, (_, j) => api(quiet.url, quiet.tenant.api_key, 'POST', `${project}/rooms`, { name: `room-${String(i + j).padStart(4, '0')}`, metadata: { topic: 'a room of the benchmark', n: i + j } })));
    }
    const room = (atrium: typeof quiet) => `/accounts/projects/${atrium.tenant.project_id}/rooms/bench-room`;
    const page = `${project}/rooms?limit=${ROOMS}`;

    const planned: { url: string; scenario: Scenario }[] = [
      { url: quiet.url, scenario: { name: 'GET room, no request lines (warn)', path: room(quiet), headers: auth, pid: quiet.pid, connections: 1 } },
      { url: logging.url, scenario: { name: 'GET room, a JSON info line per request', path: room(logging), headers: { authorization: `Bearer ${logging.tenant.api_key}` }, pid: logging.pid, connections: 1 } },
      { url: quiet.url, scenario: { name: 'GET room, accepting br and gzip', path: room(quiet), headers: { ...auth, 'accept-encoding': 'gzip, deflate, br' }, pid: quiet.pid, connections: 1 } },
      { url: quiet.url, scenario: { name: `GET ${ROOMS} rooms, as they are`, path: page, headers: auth, pid: quiet.pid, connections: 1 } },
      { url: quiet.url, scenario: { name: `GET ${ROOMS} rooms, gzip`, path: page, headers: { ...auth, 'accept-encoding': 'gzip' }, pid: quiet.pid, connections: 1 } },
      { url: quiet.url, scenario: { name: `GET ${ROOMS} rooms, brotli`, path: page, headers: { ...auth, 'accept-encoding': 'gzip, deflate, br' }, pid: quiet.pid, connections: 1 } },
    ];
    for (const { url, scenario } of planned) {
      const probe = await fetch(`${url}${scenario.path}`, { headers: scenario.headers ?? {} });
      if (probe.status !== 200) throw new Error(`${scenario.name}: expected 200, got ${probe.status} ${await probe.text()}`);
    }
    const results = await context.measureSideBySide(planned);
    for (const r of results) scenarios.push({ ...r, engine });

    const sizes = await Promise.all(['', 'gzip', 'gzip, deflate, br'].map((accept) => wireBytes(`${quiet.url}${page}`, { ...auth, ...(accept ? { 'accept-encoding': accept } : {}) })));
    notes.push(`A page of ${ROOMS} rooms on the wire: ${sizes.map((s) => `${s.encoding} ${(s.bytes / 1024).toFixed(1)} KiB`).join(', ')}.`);
    const [plain, logged, accepting] = results;
    notes.push(`The JSON request line: ${logged!.cpuUsPerRequest ?? '?'} µs of server CPU per request against ${plain!.cpuUsPerRequest ?? '?'} µs without (${((logged!.rps / (plain!.rps || 1)) * 100).toFixed(0)} % of the req/s); a client accepting compression on the hot path: ${accepting!.cpuUsPerRequest ?? '?'} µs (its answer is under the threshold and sent as it is).`);
  } finally {
    await quiet.stop();
    await logging.stop();
  }
  return { scenarios, notes: notes.join('\n\n') };
}

if (import.meta.main) await (await import('./lib.ts')).runAlone(run, ['postgres']);
