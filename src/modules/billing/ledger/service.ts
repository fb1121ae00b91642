// The ledger: a wallet per project and its append-only entries, each posted once by its idempotency
// key, and the reservations that calls in flight hold against the balance. Other parts of billing
// post through here; nothing else writes these tables.
import type { Db } from '../../../platform/db/engine.ts';
import { notFound } from '../../../platform/http/errors.ts';
import type { Page } from '../../../platform/http/lists.ts';
import * as store from './store.ts';

export type { Mismatch, NewEntry } from './store.ts';
export { lockWallets, postEntries, release, reserve, wallet } from './store.ts';

/** Appends one entry (see `postEntries`); undefined when its idempotency key was posted before. */
export async function postEntry(tx: Db, entry: store.NewEntry): Promise<store.Posted | undefined> {
  const [posted] = await store.postEntries(tx, [entry]);
  return posted;
}

/** Reverses an entry with an opposite one (at most once); the entry itself stays. */
export async function reverseEntry(tx: Db, projectId: string, entryId: string, description: string): Promise<store.Posted | undefined> {
  const entry = await store.findEntry(tx, projectId, entryId);
  if (!entry) throw notFound('Transaction');
  return postEntry(tx, {
    projectId, type: 'reversal', amountMicros: -entry.amountMicros, idempotencyKey: `reversal:${entry.id}`,
    reference: entry.id, referenceType: 'ledger_entry', description, reversesEntryId: entry.id,
  });
}

/** A page of the project's entries, newest first. */
export async function entries(db: Db, projectId: string, page: Page) {
  return store.listEntries(db, projectId, page);
}

/** Wallets that differ from their ledger (or reservations); empty when the books hold. */
export async function mismatches(db: Db, projectId?: string): Promise<store.Mismatch[]> {
  return store.ledgerMismatches(db, projectId);
}

/** Releases reservations of calls whose usage record never came, once `seconds` old. */
export async function releaseStale(db: Db, seconds: number): Promise<number> {
  return store.releaseStale(db, seconds);
}
