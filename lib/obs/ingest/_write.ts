/**
 * Where a group's write transaction (`_write_group.ts`) runs for a database
 * handle: on the handle's write thread while one runs (`write_thread.ts`),
 * otherwise on this thread. Here a local file's transaction stays open
 * across turns of the event loop (`_turns.ts`): other requests are answered
 * between its slices, and the process's other writes to the file wait for
 * it (`holdWrites`), never inside SQLite. In-memory databases have one
 * connection, which the transaction holds, and a remote one does not hold
 * the thread: they write without turns. Private to `ingest/`.
 *
 * @module
 */

import { holdWrites, type TraceDb } from "../../db.ts";
import type { BatchPlan, BatchToWrite } from "./_plan.ts";
import { writeGroupOn, type WriteHost } from "./_write_group.ts";
import { beginWrite } from "./_write_tx.ts";
import { writeThreadOf } from "./write_thread.ts";

/** Writes the accepted batches of a group in one transaction; returns every batch's plan. */
export async function writeGroup(
  db: TraceDb,
  batches: readonly BatchToWrite[],
): Promise<BatchPlan[]> {
  if (writeThreadOf(db)) {
    // Asked again once the hold is ours: the thread may have stopped meanwhile.
    const plans = await holdWrites(
      db,
      () => writeThreadOf(db)?.write(batches) ?? Promise.resolve(null),
    );
    if (plans) return plans;
  }
  return writeGroupOn(hostOf(db), batches);
}

function hostOf(db: TraceDb): WriteHost {
  return {
    // The transaction stays open across turns: other writes wait for it outside SQLite.
    hold: (work) => holdWrites(db, work),
    begin: () => beginWrite(db),
    // In-memory databases have one connection, which the transaction holds,
    // and a remote one does not hold the thread: no turns for them.
    givesWay: db.path !== null,
  };
}
