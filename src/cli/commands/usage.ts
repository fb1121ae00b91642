// `atrium usage [report]` (declared in src/cli/groups.ts): cost by model, provider, room or day.
import { unwrap } from '../../api-client/client.ts';
import { str, UsageError, type Implementations } from '../command-kit.ts';

const BY = ['model', 'provider', 'room', 'day'] as const;
type By = (typeof BY)[number];

export const commands = {
  async report(ctx) {
    const by = (str(ctx, 'by') ?? 'model') as By;
    if (!BY.includes(by)) throw new UsageError(`--by is one of ${BY.join(', ')}`);
    const query = Object.fromEntries(Object.entries({ start: str(ctx, 'start'), end: str(ctx, 'end'), provider: str(ctx, 'provider'), room: str(ctx, 'room') }).filter(([, v]) => v !== undefined));
    const body = await unwrap(ctx.api.GET('/accounts/projects/{project_id}/usage', {
      params: { path: { project_id: await ctx.project() }, query: { ...query, interval: by === 'day' ? 'day' : 'month', ...(by === 'day' ? {} : { report: by }) } },
    }));
    // One row per bucket (by day) or per model, provider or room over the whole range.
    const totals = new Map<string, { requests: number; cost: number }>();
    for (const line of body.usage) {
      const key = by === 'day' ? line.start.slice(0, 10) : (line[by as Exclude<typeof by, 'day'>] ?? '(none)');
      const total = totals.get(key) ?? { requests: 0, cost: 0 };
      total.requests += line.requests;
      total.cost += line.cost;
      totals.set(key, total);
    }
    const rows = [...totals].map(([key, t]) => ({ [by]: key, requests: t.requests, cost: `${t.cost.toFixed(4)} ${body.currency}` }));
    if (by !== 'day') rows.sort((a, b) => Number.parseFloat(String(b.cost)) - Number.parseFloat(String(a.cost)));
    return { rows, columns: [by, 'requests', 'cost'], data: body };
  },
} satisfies Implementations;
