// `atrium billing balance|transactions|recharge` (declared in src/cli/groups.ts); `billing verify`
// runs on the server's database instead (src/cli/billing.ts).
import { unwrap } from '../../api-client/client.ts';
import { num, str, toggle, UsageError, type Implementations } from '../command-kit.ts';

export const commands = {
  async balance(ctx) {
    return { record: await unwrap(ctx.api.GET('/accounts/projects/{project_id}/balance', { params: { path: { project_id: await ctx.project() } } })) };
  },
  async transactions(ctx) {
    const filter = str(ctx, 'filter');
    const body = await unwrap(ctx.api.GET('/accounts/projects/{project_id}/transactions', { params: { path: { project_id: await ctx.project() }, query: { limit: num(ctx, 'limit') ?? 100, ...(filter ? { filter } : {}) } } }));
    return { rows: body.transactions, columns: ['created_at', 'type', 'description', 'amount', 'balance_after'], data: body };
  },
  async recharge(ctx) {
    const project_id = await ctx.project();
    const current = await unwrap(ctx.api.GET('/accounts/projects/{project_id}/balance', { params: { path: { project_id } } }));
    const enabled = toggle(ctx, 'on', 'off');
    const amount = str(ctx, 'amount');
    const threshold = str(ctx, 'threshold');
    const budget = str(ctx, 'monthly-budget');
    if (enabled === undefined && amount === undefined && threshold === undefined && budget === undefined) throw new UsageError('give --on, --off, --amount, --threshold or --monthly-budget');
    const body = {
      enabled: enabled ?? current.auto_recharge_enabled,
      amount: amount ?? current.auto_recharge_amount,
      threshold: threshold ?? current.auto_recharge_threshold,
      ...(budget !== undefined ? { monthly_budget: budget } : current.monthly_budget !== null ? { monthly_budget: current.monthly_budget } : {}),
    } as never;
    return { record: await unwrap(ctx.api.POST('/accounts/projects/{project_id}/recharge', { params: { path: { project_id } }, body })) };
  },
} satisfies Implementations;
