// `atrium audit list` and `atrium audit deployment` (declared in src/cli/groups.ts): a project's
// audit entries through the API, or the deployment's own from the server's database where it runs,
// newest first, with the same filters; `--jsonl` prints one entry per line, the export for log
// collectors (docs/audit-log.md).
import { unwrap } from '../../api-client/client.ts';
import { str, UsageError, type Context, type Implementations, type Result } from '../command-kit.ts';

const OUTCOMES = ['succeeded', 'refused', 'failed'];
const FILTERS = ['actor', 'action', 'target', 'outcome', 'since', 'until'] as const;
/** The API's largest page. */
const PAGE = 1000;

/** The filters given, checked as the API checks them, and the most entries wanted (0: all). */
function filtersOf(ctx: Context): { filters: Partial<Record<(typeof FILTERS)[number], string>>; limit: number } {
  const limit = str(ctx, 'limit') === undefined ? 100 : Number(str(ctx, 'limit'));
  if (!Number.isInteger(limit) || limit < 0) throw new UsageError('--limit takes a whole number (0 for all)');
  const outcome = str(ctx, 'outcome');
  if (outcome !== undefined && !OUTCOMES.includes(outcome)) throw new UsageError(`--outcome is one of ${OUTCOMES.join(', ')}`);
  for (const name of ['since', 'until'] as const) {
    const time = str(ctx, name);
    if (time !== undefined && Number.isNaN(Date.parse(time))) throw new UsageError(`--${name} takes a time in ISO 8601, got ${JSON.stringify(time)}`);
  }
  return { filters: Object.fromEntries(FILTERS.flatMap((name) => (str(ctx, name) === undefined ? [] : [[name, str(ctx, name)]]))), limit };
}

function shown(ctx: Context, entries: Record<string, unknown>[]): Result {
  if (ctx.options.jsonl) return { message: entries.map((entry) => JSON.stringify(entry)).join('\n'), data: entries };
  const rows = entries.map((e) => {
    const { actor, target } = e as { actor: { type: string; name: string | null; id: string | null }; target: { type: string | null; id: string | null } };
    return { at: e.at, actor: `${actor.type}:${actor.name ?? actor.id ?? ''}`, action: e.action, target: target.id ?? '', outcome: e.outcome, client: e.client_address ?? '' };
  });
  return { rows, columns: ['at', 'actor', 'action', 'target', 'outcome', 'client'], data: entries };
}

export const commands = {
  async list(ctx) {
    const { filters, limit } = filtersOf(ctx);
    const project_id = await ctx.project();
    const entries: Record<string, unknown>[] = [];
    let token: string | undefined;
    do {
      const page = await unwrap(ctx.api.GET('/accounts/projects/{project_id}/audit-log', {
        params: { path: { project_id }, query: { ...filters, page_size: limit === 0 ? PAGE : Math.min(PAGE, limit - entries.length), ...(token ? { continuation_token: token } : {}) } as never },
      }));
      entries.push(...page.entries);
      token = page.continuation_token ?? undefined;
    } while (token && (limit === 0 || entries.length < limit));
    return shown(ctx, entries);
  },

  async deployment(ctx) {
    const { filters, limit } = filtersOf(ctx);
    const { listDeploymentEntries } = await import('../../modules/audit-log/service.ts');
    return shown(ctx, await listDeploymentEntries(await ctx.host(), filters, limit));
  },
} satisfies Implementations;
