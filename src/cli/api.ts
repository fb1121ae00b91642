// What every API command of the CLI shares: which server (one stored sign-in is the default), the
// credential (the stored sign-in, refreshed as needed, or ATRIUM_TOKEN for scripts), which project,
// the generated API client (src/api-client, the console's too), and output as a table or JSON.
import { ApiError, createApiClient, type ApiClient } from '../api-client/client.ts';
import { configDir, CredentialStore, NotSignedInError, UsageError } from './credentials.ts';

export { resolveServer } from './credentials.ts';

export const loginHint = (server: string) => `npx atrium login --server ${server}`;

export function apiClientFor(server: string, env: NodeJS.ProcessEnv = process.env): ApiClient {
  const fixed = env.ATRIUM_TOKEN;
  const store = new CredentialStore(configDir(env));
  return createApiClient({
    baseUrl: server,
    // The OpenID client is loaded only when a stored token must be refreshed.
    credential: fixed ? async () => fixed : () => store.accessToken(server, async (tokens) => (await import('./login.ts')).refreshTokens(server, tokens)),
  });
}

/** The message a person reads for a failed command: the API's own message and code, or a hint. */
export function describeFailure(error: unknown, server: string): string {
  if (error instanceof ApiError) {
    const hint = error.status === 401 ? ` Run: ${loginHint(server)}` : '';
    return `${error.message} (${error.code}, HTTP ${error.status}).${hint}`;
  }
  if (error instanceof NotSignedInError || error instanceof UsageError) return error.message;
  const e = error as { message?: string; cause?: { code?: string; message?: string } };
  if (e.message === 'fetch failed') {
    return `Cannot reach ${server} (${e.cause?.code ?? e.cause?.message ?? 'no answer'}). Is it running? Choose another with --server URL or ATRIUM_URL.`;
  }
  return String(e.message ?? error);
}

// ---------------------------------------------------------------------------------------------
// Output.

type Cell = unknown;

function cellText(value: Cell): string {
  if (value === null || value === undefined) return '';
  if (Array.isArray(value)) return value.map(cellText).join(',');
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** A plain text table: a header row and left-aligned columns. */
export function table(rows: readonly Record<string, Cell>[], columns: readonly string[]): string {
  if (rows.length === 0) return '(none)\n';
  const cells = rows.map((row) => columns.map((c) => cellText(row[c]).replace(/\s+/g, ' ')));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((r) => r[i]!.length)));
  const line = (values: readonly string[]) => values.map((v, i) => (i === values.length - 1 ? v : v.padEnd(widths[i]!))).join('  ').trimEnd();
  return `${[line(columns.map((c) => c.toUpperCase())), ...cells.map(line)].join('\n')}\n`;
}

/** One record as `key: value` lines. */
export function record(value: Record<string, Cell>, keys: readonly string[] = Object.keys(value)): string {
  const width = Math.max(...keys.map((k) => k.length));
  return `${keys.map((k) => `${`${k}:`.padEnd(width + 1)} ${cellText(value[k])}`).join('\n')}\n`;
}

/** Bytes for people: 1.2 MB. */
export function bytes(n: number): string {
  const units = ['B', 'kB', 'MB', 'GB', 'TB'];
  let i = 0;
  let v = n;
  while (v >= 1000 && i < units.length - 1) {
    v /= 1000;
    i++;
  }
  return i === 0 ? `${n} B` : `${v.toFixed(1)} ${units[i]}`;
}

const BAR_WIDTH = 24;

/** One line of a transfer's progress: `name  [#########-----] 40%  1.2 MB / 3.0 MB`, or the bytes so far when the size is unknown. */
export function transferLine(name: string, done: number, total: number | undefined): string {
  if (!total) return `${name}  ${bytes(done)}`;
  const share = Math.min(1, done / total);
  const filled = Math.round(share * BAR_WIDTH);
  return `${name}  [${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}] ${String(Math.floor(share * 100)).padStart(3)}%  ${bytes(done)} / ${bytes(total)}`;
}
