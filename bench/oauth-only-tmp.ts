import { startPostgres, stopAllSync } from '../test/support/postgres.ts';
import { cleanupSync, log, measure, measureSideBySide, startAtrium, type BenchContext } from './lib.ts';
import { run } from './oauth.ts';
process.on('exit', () => { cleanupSync(); stopAllSync(); });
const settings = { duration: Number(process.env.D ?? 10), warmup: 2, connections: 50, rounds: 5 };
const pg = await startPostgres();
const pgUrl = 'skipped' in pg ? undefined : pg.url;
const context: BenchContext = { pgUrl, engines: pgUrl ? ['postgres', 'pglite'] : ['pglite'], ...settings,
  startAtrium: (engine, env) => startAtrium(pgUrl, engine, env), measure: (url, s) => measure(settings, url, s),
  measureSideBySide: (t) => measureSideBySide(settings, t, log), log };
const result = await run(context) as { scenarios: any[]; notes: string };
for (const s of result.scenarios) console.log(s.engine, s.name, s.rps, s.p50, s.p99, s.ratio, s.cpuUsPerRequest, s.non2xx, s.errors);
console.log(result.notes);
process.exit(0);
