// What the CLI's command groups share: the shape of a command's declaration (the table in
// groups.ts), the context its code runs with, what it returns, and small helpers for its
// arguments. Nothing here loads the API client: `atrium --help` and a command's help stay fast.
import { readFileSync } from 'node:fs';
import type { ApiClient } from '../api-client/client.ts';
import type { AppContext } from '../context.ts';
import { UsageError } from './credentials.ts';

export { UsageError } from './credentials.ts';

export interface Option { type: 'string' | 'boolean'; multiple?: boolean; description: string; placeholder?: string }

export type Result =
  | { rows: Record<string, unknown>[]; columns: string[]; data?: unknown }
  | { record: Record<string, unknown>; keys?: string[] }
  | { message: string; data?: unknown };

export type OptionValues = Record<string, string | boolean | string[] | undefined>;

export interface Context {
  api: ApiClient;
  server: string;
  args: string[];
  options: OptionValues;
  /** The project to work in: --project, ATRIUM_PROJECT, or the caller's only project. */
  project(): Promise<string>;
  /** Progress for long transfers, on stderr. */
  progress(text: string, done?: boolean): void;
  /**
   * The server's own context, opened with its settings (the environment, as `atrium serve` reads
   * it) and closed after the command: for the commands run where the server runs (`serverHost`).
   */
  host(): Promise<AppContext>;
}

/** A group's commands' code, by command name (a module of src/cli/commands/, loaded when one runs). */
export type Implementations = Record<string, (ctx: Context) => Promise<Result>>;

/** Where a command writes, what it reads of its environment, and how it asks a question on a terminal. */
export interface CommandIo {
  out: { write(text: string): unknown; isTTY?: boolean };
  err: { write(text: string): unknown; isTTY?: boolean };
  env: NodeJS.ProcessEnv;
  /** Asks on the terminal and resolves to the answer; absent when nobody is at one (scripts, pipes). */
  ask?: (question: string) => Promise<string>;
}

export function processIo(): CommandIo {
  const terminal = Boolean(process.stdin.isTTY && process.stderr.isTTY);
  return {
    out: process.stdout,
    err: process.stderr,
    env: process.env,
    ...(terminal ? {
      async ask(question: string) {
        const { createInterface } = await import('node:readline/promises');
        const prompt = createInterface({ input: process.stdin, output: process.stderr });
        try {
          return await prompt.question(question);
        } finally {
          prompt.close();
        }
      },
    } : {}),
  };
}

/** The positional argument at `index`, named `name` in the usage line; a usage error when missing. */
export function arg(ctx: Context, index: number, name: string): string {
  const value = ctx.args[index];
  if (value === undefined) throw new UsageError(`missing ${name}`);
  return value;
}

export const str = (ctx: Context, name: string) => ctx.options[name] as string | undefined;
export const many = (ctx: Context, name: string) => (ctx.options[name] as string[] | undefined) ?? [];
export const flag = (ctx: Context, name: string) => ctx.options[name] === true;

/** The project, and the room of `--room` for the families a room can have its own of (secrets, services, registrations). */
export async function projectOrRoom(ctx: Context): Promise<{ project_id: string; room: string | undefined }> {
  return { project_id: await ctx.project(), room: str(ctx, 'room') };
}

/** A list's query: its largest page, and `--filter` when given. */
export const listQuery = (ctx: Context) => {
  const filter = str(ctx, 'filter');
  return { count: 1000, ...(filter ? { filter } : {}) };
};

/** A required option, `--name VALUE`. */
export function need(ctx: Context, name: string): string {
  const value = str(ctx, name);
  if (value === undefined) throw new UsageError(`give --${name}`);
  return value;
}

/** A number option, when given. */
export function num(ctx: Context, name: string): number | undefined {
  const value = str(ctx, name);
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (!Number.isFinite(parsed)) throw new UsageError(`--${name} must be a number, got ${JSON.stringify(value)}`);
  return parsed;
}

/** A JSON option (`--metadata '{"a": 1}'`), when given. */
export function jsonOption<T = unknown>(ctx: Context, name: string): T | undefined {
  const value = str(ctx, name);
  if (value === undefined) return undefined;
  try {
    return JSON.parse(value) as T;
  } catch (error) {
    throw new UsageError(`--${name} is not valid JSON: ${(error as Error).message}`);
  }
}

/** `--on` or `--off`: true, false, or undefined when neither is given (both is a usage error). */
export function toggle(ctx: Context, on: string, off: string): boolean | undefined {
  if (flag(ctx, on) && flag(ctx, off)) throw new UsageError(`give --${on} or --${off}, not both`);
  return flag(ctx, on) ? true : flag(ctx, off) ? false : undefined;
}

/** A file's text, or standard input's for `-`. */
export function readText(path: string): string {
  try {
    return readFileSync(path === '-' ? 0 : path, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read ${path === '-' ? 'standard input' : path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (value: string) => UUID.test(value);

/**
 * The id of a resource named by id or by name: a UUID is taken as it is; a name is looked up in the
 * list the API filters by name (`find` returns the matches), and must match exactly one.
 */
export async function idOf(what: string, given: string, find: (name: string) => Promise<{ id: string; name: string }[]>): Promise<string> {
  if (isUuid(given)) return given;
  const exact = (await find(given)).filter((item) => item.name === given);
  if (exact.length === 1) return exact[0]!.id;
  throw new UsageError(exact.length === 0 ? `no ${what} named ${JSON.stringify(given)}` : `${exact.length} ${what}s are named ${JSON.stringify(given)}: give the id`);
}
