// `atrium serve`: run until SIGTERM/SIGINT, then drain and exit.
import { describeConfig, type Config } from '../config.ts';
import { startService } from '../main.ts';
import { hasUsers } from '../modules/users/service.ts';

export async function serve(config: Config): Promise<number> {
  const service = await startService(config);
  const { ctx } = service;
  ctx.log.debug({ settings: describeConfig(config) }, 'effective settings');
  ctx.log.info({ url: config.publicUrl, database: ctx.database.engine, dataDir: ctx.database.engine === 'pglite' ? config.dataDir : undefined }, 'Atrium is listening');
  if (!(await hasUsers(ctx.db))) {
    const embedded = ctx.database.engine === 'pglite';
    process.stderr.write(
      `\nNo users yet. Create the first admin, a project and an API key with:\n\n` +
      `  ${embedded ? 'stop this server, then run ' : ''}npx atrium bootstrap --email you@example.com --password '<password>' --project my-project\n\n` +
      `API reference: ${config.publicUrl}/docs\n\n`,
    );
  }
  return new Promise((resolve) => {
    const shutdown = (signal: string) => {
      ctx.log.info({ signal }, 'shutting down');
      service.close().then(() => resolve(0), (error: unknown) => {
        ctx.log.error({ err: error }, 'shutdown failed');
        resolve(1);
      });
    };
    process.once('SIGTERM', () => shutdown('SIGTERM'));
    process.once('SIGINT', () => shutdown('SIGINT'));
  });
}
