// The fully assembled app on a throwaway embedded database, for scripts that read what the route
// table declares (docs/permissions.md, the console's API types) without a server or a real database.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp, type BuiltApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import type { AppContext } from '../src/context.ts';
import { openContext } from '../src/main.ts';
import { modules } from '../src/modules/index.ts';

export async function withThrowawayApp<T>(read: (built: BuiltApp, ctx: AppContext) => T | Promise<T>): Promise<T> {
  return withThrowawayContext(async (ctx) => {
    const built = await buildApp(ctx, modules);
    try {
      return await read(built, ctx);
    } finally {
      await built.app.close();
    }
  });
}

/** The service's context (module list, event consumers) on a throwaway embedded database. */
export async function withThrowawayContext<T>(read: (ctx: AppContext) => T | Promise<T>): Promise<T> {
  const dataDir = mkdtempSync(join(tmpdir(), 'atrium-routes-'));
  try {
    const ctx = await openContext(loadConfig({ ATRIUM_DATA_DIR: dataDir, ATRIUM_LOG_LEVEL: 'silent' }));
    try {
      return await read(ctx);
    } finally {
      await ctx.database.close();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
