// `atrium keys rotate`: adds a signing key to the shared database. Running instances sign with it
// within ATRIUM_KEY_REFRESH_SECONDS and verify tokens signed with it at once; the previous key stays
// published until it retires (ATRIUM_KEY_RETIRE_AFTER_DAYS after being superseded).
// `atrium keys reencrypt`: after ATRIUM_SECRET_KEY changed, seals every stored value that an old key
// (ATRIUM_SECRET_KEY_FALLBACKS) sealed again under the new one, so that the old key can go.
import type { Config } from '../config.ts';
import type { AppContext } from '../context.ts';
import type { SealedColumnReport } from '../platform/crypto/sealed.ts';
import { openHost } from './host.ts';
import { operatorActor } from './operator.ts';
import { commandUsage } from './usage.ts';

const KEYS_USAGE = commandUsage('keys')!;

/** The deployment's audit events of this command (docs/audit-log.md). */
export const KEY_EVENTS = {
  'signing_key.rotate': 'An operator added a signing key with `atrium keys rotate` (the actor is the operating-system user)',
  'secret_key.reencrypt': 'An operator sealed the stored secrets again under the current ATRIUM_SECRET_KEY with `atrium keys reencrypt` (the reason says how many values moved)',
} as const;

export async function keysCommand(args: string[], config: () => Config): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === 'help' || sub === '--help' || sub === '-h') {
    process.stdout.write(`${KEYS_USAGE}\n`);
    return 0;
  }
  if (sub === 'reencrypt' && (rest.length === 0 || (rest.length === 1 && rest[0] === '--dry-run'))) return reencrypt(config, rest.length === 1);
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

async function reencrypt(config: () => Config, dryRun: boolean): Promise<number> {
  const settings = config();
  if (settings.secretKeyFallbacks.length === 0) {
    process.stderr.write('atrium: ATRIUM_SECRET_KEY_FALLBACKS is empty, so nothing can move: this run checks that every stored value opens under ATRIUM_SECRET_KEY\n');
  }
  const ctx = await openHost(settings);
  try {
    const { columns, unreadable } = await reencryptStored(ctx, {
      dryRun,
      progress: (report) => process.stderr.write(`atrium: ${report.column}: ${report.read} read, ${report.moved} ${dryRun ? 'to seal again' : 'sealed again'}${report.unreadable > 0 ? `, ${report.unreadable} opened by no key` : ''}\n`),
    });
    process.stdout.write(`${JSON.stringify({ dry_run: dryRun, columns })}\n`);
    if (unreadable > 0) {
      process.stderr.write(`atrium: ${unreadable} stored values open under neither ATRIUM_SECRET_KEY nor ATRIUM_SECRET_KEY_FALLBACKS: add the key that sealed them to ATRIUM_SECRET_KEY_FALLBACKS and run again; they were left as they are\n`);
      return 1;
    }
    return 0;
  } finally {
    await ctx.database.close();
  }
}

/**
 * Seals every stored value an old key sealed again under the current one (`reencryptSealed` over
 * `sealedColumns`), and records it in the deployment's audit log unless it is a dry run.
 */
export async function reencryptStored(ctx: AppContext, options: { dryRun: boolean; progress?: (report: SealedColumnReport) => void }): Promise<{ columns: SealedColumnReport[]; unreadable: number }> {
  const [{ reencryptSealed }, { sealedColumns }] = await Promise.all([import('../platform/crypto/sealed.ts'), import('../main.ts')]);
  const columns = await reencryptSealed(ctx.db, ctx.secrets, sealedColumns(), options);
  const total = (field: 'moved' | 'changed' | 'unreadable') => columns.reduce((sum, report) => sum + report[field], 0);
  if (!options.dryRun) {
    const reason = `${total('moved')} values sealed again, ${total('changed')} changed meanwhile, ${total('unreadable')} opened by no key`;
    await ctx.audit.write(ctx.db, { projectId: null, actor: operatorActor(), action: 'secret_key.reencrypt', outcome: total('unreadable') > 0 ? 'failed' : 'succeeded', reason });
  }
  return { columns, unreadable: total('unreadable') };
}
