// The server's own context, for a command run where the server runs (`bootstrap`, `keys rotate`,
// `factors reset`, `billing verify`, `audit deployment`). The server's modules load only here, once
// the command has checked its arguments, so a mistyped one answers at once. Warnings only, on
// stderr: stdout carries the command's output alone.
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.ts';
import type { AppContext } from '../context.ts';

/** Opens the server's context; close it with `ctx.database.close()`. `config` defaults to the process environment's settings. */
export async function openHost(config?: Config): Promise<AppContext> {
  const [{ loadConfig }, { openContext }, { default: pino }] = await Promise.all([import('../config.ts'), import('../main.ts'), import('pino')]);
  return openContext(config ?? loadConfig(), pino({ level: 'warn' }, pino.destination(2)) as unknown as FastifyBaseLogger);
}
