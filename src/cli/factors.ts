// `atrium factors reset EMAIL`: the operator's recovery for a user who lost every second factor
// (authenticator app, passkeys and recovery codes): removes them all and mails the account's owner.
// It opens the database like `serve`, so it runs where the server's settings are, and records the
// reset in the deployment's audit log with the change.
import type { Config } from '../config.ts';
import { openHost } from './host.ts';
import { operatorActor } from './operator.ts';
import { commandUsage } from './usage.ts';

const FACTORS_USAGE = commandUsage('factors')!;

/** The deployment's audit events of this command (docs/audit-log.md). */
export const FACTOR_RESET_EVENTS = { 'second_factor.reset': 'An operator removed every second factor of an account with `atrium factors reset` (the actor is the operating-system user, the target the account)' } as const;

export async function factorsCommand(args: string[], config: () => Config): Promise<number> {
  const [sub, email, ...rest] = args;
  if (sub === 'help' || sub === '--help' || sub === '-h') {
    process.stdout.write(`${FACTORS_USAGE}\n`);
    return 0;
  }
  if (sub !== 'reset' || !email || rest.length > 0) {
    process.stderr.write(`${FACTORS_USAGE}\n`);
    return 2;
  }
  const [ctx, { createSecondFactors }] = await Promise.all([openHost(config()), import('../modules/users/service.ts')]);
  try {
    const reset = await createSecondFactors(ctx).resetAll(email.trim(), operatorActor());
    if (!reset) {
      process.stderr.write(`atrium: no account has the address ${email}\n`);
      return 1;
    }
    process.stdout.write(`${JSON.stringify(reset)}\n`);
    return 0;
  } finally {
    await ctx.database.close();
  }
}
