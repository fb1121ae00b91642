// OAuth scenarios of `npm run bench` (run by bench/run.ts): the token endpoint with
// client_credentials, and the whole authorization code flow (authorize → sign-in form → consent →
// code → token), each side by side with a bare oidc-provider (in-memory adapter, development sign-in
// pages, no password hashing) in the same run. Target: Atrium's token endpoint at
// ≥ 60 % of the bare provider's throughput on PostgreSQL.
import { createHash, randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import {
  cleanEnv, cpuSeconds, freePort, repoRoot, spawnChild, stopChild, waitReady,
  type BenchContext, type Engine, type Scenario, type ScenarioResult,
} from './lib.ts';

const REDIRECT_URI = 'http://127.0.0.1:9/callback';
const TARGET_RATIO = 0.9;
/** Concurrent browsers in the authorization-code flow measurement. */
const FLOW_CONCURRENCY = 8;

interface Side {
  name: string;
  url: string;
  pid: number;
  machine: { clientId: string; secret: string };
  web: { clientId: string; secret: string };
  /** Fills the sign-in form of this side. */
  credentials: Record<string, string>;
  paths: { authorize: string; token: string };
}

const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

async function startBareProvider(): Promise<Side & { stop(): Promise<void> }> {
  const port = await freePort();
  const secret = randomBytes(24).toString('base64url');
  const child = spawnChild([process.execPath, join(repoRoot, 'bench', 'oauth-bare.ts')], cleanEnv({ BARE_PORT: String(port), BARE_CLIENT_SECRET: secret, BARE_REDIRECT_URI: REDIRECT_URI }));
  const url = `http://127.0.0.1:${port}`;
  await waitReady(child, `${url}/.well-known/openid-configuration`, 'bare oidc-provider');
  return {
    name: 'bare oidc-provider',
    url,
    pid: child.pid!,
    machine: { clientId: 'machine', secret },
    web: { clientId: 'web', secret },
    credentials: { login: 'bench', password: 'bench' },
    paths: { authorize: '/auth', token: '/token' },
    stop: () => stopChild(child),
  };
}

async function createClient(url: string, apiKey: string, projectId: string, body: unknown): Promise<{ clientId: string; secret: string }> {
  const response = await fetch(`${url}/accounts/projects/${projectId}/oauth/clients`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const created = (await response.json()) as { client_id: string; client_secret: string };
  if (response.status !== 201) throw new Error(`creating an OAuth client failed: ${response.status} ${JSON.stringify(created)}`);
  return { clientId: created.client_id, secret: created.client_secret };
}

/** One browser: a cookie jar (one origin, latest value per name) and manual redirects. */
class Visitor {
  readonly #cookies = new Map<string, string>();
  requests = 0;

  async fetch(url: string, form?: Record<string, string>): Promise<{ status: number; location: string | undefined; html: string }> {
    this.requests++;
    const response = await fetch(url, {
      method: form ? 'POST' : 'GET',
      redirect: 'manual',
      headers: {
        accept: 'text/html',
        ...(this.#cookies.size > 0 ? { cookie: [...this.#cookies].map(([k, v]) => `${k}=${v}`).join('; ') } : {}),
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      ...(form ? { body: new URLSearchParams(form).toString() } : {}),
    });
    for (const header of response.headers.getSetCookie()) {
      const [pair] = header.split(';');
      const eq = pair!.indexOf('=');
      const value = pair!.slice(eq + 1);
      if (value && !/max-age=0|expires=thu, 01 jan 1970/i.test(header)) this.#cookies.set(pair!.slice(0, eq), value);
    }
    const location = response.headers.get('location');
    return { status: response.status, location: location ? new URL(location, url).href : undefined, html: await response.text() };
  }
}

function forms(html: string): { action: string; hidden: Record<string, string>; fields: string[] }[] {
  return [...html.matchAll(/<form[^>]*action="([^"]*)"[^>]*>([\s\S]*?)<\/form>/g)].map((m) => ({
    action: m[1]!.replace(/&amp;/g, '&'),
    hidden: Object.fromEntries([...m[2]!.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"\s*\/?>/g)].map((i) => [i[1]!, i[2]!])),
    fields: [...m[2]!.matchAll(/name="([^"]+)"/g)].map((i) => i[1]!),
  }));
}

/** authorize → sign-in form → consent → code → token, as a new browser; returns requests made. */
async function authorizationCodeFlow(side: Side): Promise<number> {
  const visitor = new Visitor();
  const verifier = randomBytes(32).toString('base64url');
  const authorize = new URL(`${side.url}${side.paths.authorize}`);
  for (const [k, v] of Object.entries({
    client_id: side.web.clientId, response_type: 'code', redirect_uri: REDIRECT_URI, scope: 'openid profile:read', state: randomBytes(8).toString('hex'),
    code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256',
  })) authorize.searchParams.set(k, v);
  let response = await visitor.fetch(authorize.href);
  let code: string | undefined;
  for (let step = 0; step < 20 && !code; step++) {
    if (response.location) {
      if (response.location.startsWith(REDIRECT_URI)) code = new URL(response.location).searchParams.get('code') ?? undefined;
      else response = await visitor.fetch(response.location);
      continue;
    }
    const page = forms(response.html);
    const login = page.find((f) => f.fields.includes('password'));
    const consent = page.find((f) => f.action.endsWith('/consent') || f.hidden.prompt === 'consent');
    if (login) response = await visitor.fetch(new URL(login.action, side.url).href, { ...login.hidden, ...side.credentials });
    else if (consent) response = await visitor.fetch(new URL(consent.action, side.url).href, { ...consent.hidden, decision: 'allow' });
    else throw new Error(`${side.name}: unexpected page ${response.status}: ${response.html.slice(0, 300)}`);
  }
  if (!code) throw new Error(`${side.name}: the flow did not reach the redirect URI`);
  visitor.requests++;
  const token = await fetch(`${side.url}${side.paths.token}`, {
    method: 'POST',
    headers: { authorization: basic(side.web.clientId, side.web.secret), 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: REDIRECT_URI }).toString(),
  });
  if (token.status !== 200) throw new Error(`${side.name}: token exchange failed: ${token.status} ${await token.text()}`);
  await token.arrayBuffer();
  return visitor.requests;
}

/** Complete flows per second with FLOW_CONCURRENCY browsers; the sides take turns in slices. */
async function measureFlows(context: BenchContext, sides: Side[]): Promise<ScenarioResult[]> {
  const totals = sides.map(() => ({ latencies: [] as number[], seconds: 0, requests: 0, errors: 0, cpu: 0 as number | undefined }));
  const loadBefore = loadavg()[0]!;
  const run = async (side: Side, seconds: number, into?: (typeof totals)[number]) => {
    const deadline = performance.now() + seconds * 1000;
    const started = performance.now();
    const cpuBefore = cpuSeconds(side.pid);
    await Promise.all(Array.from({ length: FLOW_CONCURRENCY }, async () => {
      while (performance.now() < deadline) {
        const t0 = performance.now();
        try {
          const requests = await authorizationCodeFlow(side);
          if (into) {
            into.latencies.push(performance.now() - t0);
            into.requests += requests;
          }
        } catch (error) {
          if (!into) throw error;
          into.errors++;
        }
      }
    }));
    if (into) {
      into.seconds += (performance.now() - started) / 1000;
      const cpuAfter = cpuSeconds(side.pid);
      into.cpu = into.cpu === undefined || cpuBefore === undefined || cpuAfter === undefined ? undefined : into.cpu + cpuAfter - cpuBefore;
    }
  };
  for (const side of sides) if (context.warmup > 0) await run(side, context.warmup);
  const rounds = Math.max(1, Math.round(context.rounds));
  const slice = Math.max(1, Math.round(context.duration / rounds));
  for (let round = 1; round <= rounds; round++) {
    context.log(`oauth: authorization-code flow, round ${round}/${rounds}`);
    for (const [i, side] of sides.entries()) await run(side, slice, totals[i]);
  }
  const load: [number, number] = [Math.round(loadBefore * 100) / 100, Math.round(loadavg()[0]! * 100) / 100];
  return sides.map((side, i) => {
    const total = totals[i]!;
    const sorted = [...total.latencies].sort((a, b) => a - b);
    const at = (p: number) => (sorted.length ? Math.round(sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]! * 10) / 10 : 0);
    return {
      name: `${side.name}: authorization-code flow (flows/s)`,
      method: 'FLOW',
      path: 'authorize → sign-in → consent → token',
      rps: Math.round((sorted.length / (total.seconds || 1)) * 10) / 10,
      p50: at(50),
      p99: at(99),
      requests: total.requests,
      non2xx: 0,
      errors: total.errors,
      timeouts: 0,
      seconds: Math.round(total.seconds * 100) / 100,
      statusCodes: {},
      // Per flow here, not per request.
      cpuUsPerRequest: total.cpu !== undefined && sorted.length > 0 ? Math.round((total.cpu * 1e6) / sorted.length) : undefined,
      load,
    };
  });
}

export async function run(context: BenchContext): Promise<object> {
  const scenarios: (ScenarioResult & { engine: string; ratio: number })[] = [];
  const ratios: string[] = [];
  const bare = await startBareProvider();
  try {
    for (const engine of context.engines as Engine[]) {
      context.log(`oauth: ${engine}: starting atrium`);
      // The bench signs in a few hundred times a second from one address.
      const atrium = await context.startAtrium(engine, { ATRIUM_EMAIL_LOGIN: 'true', ATRIUM_DEV_MAILBOX: 'true', ATRIUM_SIGNIN_LIMIT_PER_IP: '999999', ATRIUM_TOKEN_LIMIT_PER_IP: '999999' });
      try {
        const { project_id: projectId, api_key: apiKey } = atrium.tenant;
        const side: Side = {
          name: `atrium (${engine})`,
          url: atrium.url,
          pid: atrium.pid,
          machine: await createClient(atrium.url, apiKey, projectId, { name: 'bench machine', grant_types: ['client_credentials'], scope: 'profile:read' }),
          web: await createClient(atrium.url, apiKey, projectId, { name: 'bench web', grant_types: ['authorization_code', 'refresh_token'], redirect_uris: [REDIRECT_URI], scope: 'openid profile:read' }),
          credentials: { email: 'bench@example.test', password: 'bench password 1' },
          paths: { authorize: '/oauth/authorize', token: '/oauth/token' },
        };
        const tokenScenario = (s: Side, path: string): Scenario => ({
          name: `${s.name}: POST token (client_credentials)`,
          method: 'POST',
          path,
          headers: { authorization: basic(s.machine.clientId, s.machine.secret), 'content-type': 'application/x-www-form-urlencoded' },
          body: 'grant_type=client_credentials&scope=profile%3Aread',
          pid: s.pid,
        });
        const atriumToken = tokenScenario(side, side.paths.token);
        const bareToken = tokenScenario(bare, bare.paths.token);
        for (const [url, scenario] of [[bare.url, bareToken], [atrium.url, atriumToken]] as const) {
          const probe = await fetch(`${url}${scenario.path}`, { method: 'POST', headers: scenario.headers, body: scenario.body });
          if (probe.status !== 200) throw new Error(`${scenario.name}: expected 200, got ${probe.status} ${await probe.text()}`);
        }
        await authorizationCodeFlow(side);
        await authorizationCodeFlow(bare);

        context.log(`oauth: ${engine}: token endpoint`);
        const [bareResult, atriumResult] = await context.measureSideBySide([{ url: bare.url, scenario: bareToken }, { url: atrium.url, scenario: atriumToken }]);
        const tokenRatio = Math.round((atriumResult!.rps / (bareResult!.rps || 1)) * 1000) / 1000;
        scenarios.push({ ...bareResult!, engine, ratio: 1 }, { ...atriumResult!, engine, ratio: tokenRatio });

        context.log(`oauth: ${engine}: authorization-code flow`);
        const [bareFlow, atriumFlow] = await measureFlows(context, [bare, side]);
        const flowRatio = Math.round((atriumFlow!.rps / (bareFlow!.rps || 1)) * 1000) / 1000;
        scenarios.push({ ...bareFlow!, engine, ratio: 1 }, { ...atriumFlow!, engine, ratio: flowRatio });
        ratios.push(`${engine}: token endpoint ${(tokenRatio * 100).toFixed(0)} % of bare${engine === 'postgres' ? ` (target ≥ ${TARGET_RATIO * 100} %: ${tokenRatio >= TARGET_RATIO ? 'met' : 'NOT met'})` : ''}, full flow ${(flowRatio * 100).toFixed(0)} %`);
      } finally {
        await atrium.stop();
      }
    }
  } finally {
    await bare.stop();
  }
  return {
    scenarios,
    notes: [
      ...ratios,
      `The bare provider keeps everything in memory and its development sign-in accepts any password without hashing; Atrium stores every artefact in the database (atomic single-use codes), checks an argon2id password hash per sign-in, and renders its own pages with CSRF tokens. Flows: ${FLOW_CONCURRENCY} concurrent browsers, each flow is 7–8 HTTP requests; p50/p99 and server CPU µs are per whole flow; most of Atrium's is the argon2id password verification (≈ 25–30 ms of CPU on the reference machine).`,
    ].join('\n\n'),
  };
}
