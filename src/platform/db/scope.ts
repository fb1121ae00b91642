// A request's transaction: a handler runs inside one, and every query it makes through the database
// handle joins it (its services' own transactions become savepoints), so that a record the platform
// writes after the handler (the audit log's entry) commits with the change or not at all, without a
// service passing a transaction along. Work that is not the request's (group-committed writes of
// many requests, the job worker) runs outside any request's transaction. So does work a handler
// starts that must not share the transaction's fate or its connection (a mail about the change, a
// wrong code's count): it waits for the transaction's end, which on the embedded database, whose one
// connection the transaction holds, it could not run before.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Db } from './handle.ts';

/** The open transaction of the request in flight; `open` turns false when it ends, for work it left running. */
interface Scope {
  readonly tx: Db;
  open: boolean;
  /** Work waiting for the transaction's end, told whether it committed. */
  readonly ended: ((committed: boolean) => Promise<unknown>)[];
}

const current = new AsyncLocalStorage<Scope>();

function openTransaction(): Db | undefined {
  const scope = current.getStore();
  return scope?.open ? scope.tx : undefined;
}
const scopedHandles = new WeakMap<Db, Db>();

/** The database a scoped handle stands for (any other handle is its own). */
export function rootDb(db: Db): Db {
  return scopedHandles.get(db) ?? db;
}

/** The handle itself, or the transaction of the request in flight when one is open. */
export function resolveDb(db: Db): Db {
  const root = scopedHandles.get(db);
  if (root === undefined) return db;
  return openTransaction() ?? root;
}

/**
 * A handle that stands for the database and, while a request's transaction is open, for that
 * transaction: property reads go to whichever is current, so query builders bind to it.
 */
export function scopedDb(db: Db): Db {
  const scoped = new Proxy(db, {
    get(target, property) {
      const handle = openTransaction() ?? target;
      const value = Reflect.get(handle, property, handle) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(handle) : value;
    },
  });
  scopedHandles.set(scoped, db);
  return scoped;
}

/** Runs `fn` in one transaction that every query through a scoped handle joins; `fn` gets it too. */
export async function inRequestTransaction<T>(db: Db, fn: (tx: Db) => Promise<T>): Promise<T> {
  const root = scopedHandles.get(db) ?? db;
  const ended: Scope['ended'] = [];
  const end = (committed: boolean) => current.exit(() => Promise.all(ended.map((run) => run(committed))));
  let value: T;
  try {
    value = await root.transaction((tx) => {
      const scope: Scope = { tx: tx as unknown as Db, open: true, ended };
      // Work the handler left running goes to the database itself.
      return current.run(scope, () => fn(scope.tx)).finally(() => { scope.open = false; });
    });
  } catch (error) {
    await end(false);
    throw error;
  }
  await end(true);
  return value;
}

/**
 * Runs `fn` once the request transaction in flight has ended, committed or rolled back, and before
 * the request answers; at once when none is open (resolving when it is done). For writes that a
 * rollback must not undo: a wrong code's count.
 */
export async function afterRequestTransaction(fn: () => Promise<unknown>): Promise<void> {
  const scope = current.getStore();
  if (scope?.open) scope.ended.push(fn);
  else await fn();
}

/**
 * Starts `fn` once the request transaction in flight has committed, never when it rolls back, and
 * without the request waiting for it; at once when none is open (resolving when it is done). For
 * what tells of a change: a mail to the account's owner. Nobody waits for it there, so `fn` handles
 * its own failure.
 */
export async function onceCommitted(fn: () => Promise<unknown>): Promise<void> {
  const scope = current.getStore();
  if (!scope?.open) {
    await fn();
    return;
  }
  scope.ended.push(async (committed) => {
    if (committed) void fn();
  });
}

/** Runs `fn` outside the request transaction that may be open (work on behalf of many requests). */
export function outsideRequestTransaction<T>(fn: () => T): T {
  return current.exit(fn);
}
