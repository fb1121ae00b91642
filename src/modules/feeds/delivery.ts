// Delivery of feed messages into room storage: a flush job per subscription writes the waiting
// messages as one JSON Lines file, and a schedule prunes messages every subscription has delivered.
//
// Exactly once per subscription, across crashes: a flush first reserves its batch (the message
// range and the file name) in a transaction, then writes the file, then acknowledges the batch —
// advancing the subscription past it and emitting storage.file.updated — in a second transaction.
// A crash after the write and before the acknowledgement finds the batch still reserved and writes
// the same file with the same lines again (the blob store replaces it whole), so no line is lost or
// doubled, and the event is emitted once, by the acknowledgement.
import { Readable } from 'node:stream';
import type { AppContext } from '../../context.ts';
import type { Schedule } from '../../platform/jobs/scheduler.ts';
import type { RunnerOf } from '../../platform/jobs/types.ts';
import { announceFileUpdated, roomStoragePath, writeFile } from '../storage/service.ts';
import { fileNameFor } from './filenames.ts';
import type { flushJob } from './jobs.ts';
import { flushPolicy } from './service.ts';
import * as store from './store.ts';

export function flushHandler(ctx: AppContext): RunnerOf<typeof flushJob> {
  return {
    async run({ payload }, { db }) {
      const policy = flushPolicy(ctx);
      const batch = await store.reserveBatch(db, payload.subscription_id, policy, (sub, first) =>
        roomStoragePath(sub.room, [sub.path, fileNameFor(sub.format, first.createdAt, sub.id, first.seq)].filter(Boolean).join('/')));
      if (!batch) return {};
      const lines = await store.batchMessages(db, batch.feedId, batch.fromSeq, batch.toSeq);
      await writeFile(ctx, batch.projectId, batch.file, Readable.from([Buffer.from(`${lines.join('\n')}\n`)]));
      await db.transaction(async (tx) => {
        if (await store.completeBatch(tx, batch, policy)) {
          await announceFileUpdated(ctx, tx, batch.projectId, batch.file, `feed_subscription:${batch.subscriptionId}`);
        }
      });
      return {};
    },
  };
}

export function pruneSchedule(): Schedule {
  return {
    name: 'feeds.prune',
    cron: '*/10 * * * *',
    async run({ db }) {
      await store.pruneDelivered(db);
    },
  };
}
