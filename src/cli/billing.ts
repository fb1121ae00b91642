// `atrium billing verify`: proves that every project's wallet equals its ledger's sum (and its
// reserved amount the sum of its reservations). Exit 0 when the books hold, 1 with the differences.
import { parseArgs } from 'node:util';
import { openHost } from './host.ts';
import { commandUsage } from './usage.ts';

export async function billingCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub !== 'verify') {
    process.stderr.write(`${commandUsage('billing')}\n`);
    return 2;
  }
  const { values } = parseArgs({ args: rest, options: { project: { type: 'string' }, json: { type: 'boolean', default: false } }, strict: true });
  const [ctx, { verifyLedger }] = await Promise.all([openHost(), import('../modules/billing/service.ts')]);
  try {
    const mismatches = [...await verifyLedger(ctx.db, values.project)];
    if (values.json) process.stdout.write(`${JSON.stringify({ ok: mismatches.length === 0, mismatches })}\n`);
    else if (mismatches.length === 0) process.stdout.write('ok: every wallet equals its ledger\n');
    else for (const m of mismatches) process.stdout.write(`project ${m.project_id}: wallet ${m.wallet} ≠ ledger ${m.ledger} (micro-units); reserved ${m.reserved}, reservations ${m.reservations}\n`);
    return mismatches.length === 0 ? 0 : 1;
  } finally {
    await ctx.database.close();
  }
}
