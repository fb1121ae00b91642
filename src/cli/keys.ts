// `atrium keys rotate`: adds a signing key to the shared database. Running instances sign with it
// within ATRIUM_KEY_REFRESH_SECONDS and verify tokens signed with it at once; the previous key stays
// published until it retires (ATRIUM_KEY_RETIRE_AFTER_DAYS after being superseded).
import type { Config } from '../config.ts';
import { openHost } from './host.ts';
import { operatorActor } from './operator.ts';
import { commandUsage } from './usage.ts';

const KEYS_USAGE = commandUsage('keys')!;

/** The deployment's audit events of this command (docs/audit-log.md). */
export const KEY_EVENTS = { 'signing_key.rotate': 'An operator added a signing key with `atrium keys rotate` (the actor is the operating-system user)' } as const;

export async function keysCommand(args: string[], config: () => Config): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === 'help' || sub === '--help' || sub === '-h') {
    process.stdout.write(`${KEYS_USAGE}\n`);
    return 0;
  }
  if (sub !== 'rotate' || rest.length > 0) {
    process.stderr.write(`${KEYS_USAGE}\n`);
    return 2;
  }
  const [ctx, { rotateSigningKey }, { inRequestTransaction }] = await Promise.all([
    openHost(config()), import('../platform/crypto/signing-keys.ts'), import('../platform/db/scope.ts'),
  ]);
  try {
    // The key and its audit entry commit together.
    const kid = await inRequestTransaction(ctx.db, async (tx) => {
      const added = await rotateSigningKey(ctx.db, ctx.secrets);
      await ctx.audit.write(tx, { projectId: null, actor: operatorActor(), action: 'signing_key.rotate', target: { type: 'signing_key', id: added }, outcome: 'succeeded' });
      return added;
    });
    const refresh = ctx.config.keys.refreshMs / 1000;
    process.stdout.write(`${JSON.stringify({ kid, signing_within_seconds: refresh, previous_keys_retire_after_days: ctx.config.keys.retireAfterMs / 86_400_000 })}\n`);
    return 0;
  } finally {
    await ctx.database.close();
  }
}
