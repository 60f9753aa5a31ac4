/**
 * Group commit: one writer per database handle. Batches that arrive while a
 * write is in progress wait in a queue, and the next write takes all of
 * them (up to {@link MAX_GROUP_EVENTS} events) into one transaction, so
 * concurrent HTTP batches share one commit instead of queueing for one
 * each. Every batch is still all or nothing and is acknowledged only once
 * the transaction holding it has committed. A group whose write fails is
 * retried one batch at a time, so a failing batch fails alone.
 *
 * Writes of one handle never overlap: two write transactions open at once
 * on one local database would wait on each other's lock inside SQLite,
 * which holds the thread they both need. Private to `ingest/`.
 *
 * @module
 */

import type { TraceDb } from "../../db.ts";
import type { BatchPlan, BatchToWrite } from "./_plan.ts";
import { writeGroup } from "./_write.ts";
import { noteCommit } from "./checkpoints.ts";

/**
 * Most events one group transaction takes (a larger single batch still goes
 * alone): every batch of a group waits for the group's commit, so a group of
 * a few thousand events keeps each batch's wait short.
 */
export const MAX_GROUP_EVENTS = 5_000;

interface Waiting {
  batch: BatchToWrite;
  resolve: (plan: BatchPlan) => void;
  reject: (error: unknown) => void;
}

class GroupWriter {
  readonly #db: TraceDb;
  #queue: Waiting[] = [];
  #draining = false;

  constructor(db: TraceDb) {
    this.#db = db;
  }

  write(batch: BatchToWrite): Promise<BatchPlan> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ batch, resolve, reject });
      if (!this.#draining) void this.#drain();
    });
  }

  async #drain(): Promise<void> {
    this.#draining = true;
    try {
      while (this.#queue.length > 0) await this.#writeNext(this.#takeGroup());
    } finally {
      this.#draining = false;
    }
  }

  #takeGroup(): Waiting[] {
    let events = 0;
    let count = 0;
    for (const waiting of this.#queue) {
      events += waiting.batch.events.length;
      if (count > 0 && events > MAX_GROUP_EVENTS) break;
      count++;
    }
    return this.#queue.splice(0, count);
  }

  async #writeNext(group: Waiting[]): Promise<void> {
    try {
      const plans = await writeGroup(this.#db, group.map((w) => w.batch));
      noteCommit(this.#db);
      group.forEach((waiting, i) => waiting.resolve(plans[i]!));
    } catch (error) {
      if (group.length === 1) return group[0]!.reject(error);
      for (const waiting of group) await this.#writeNext([waiting]);
    }
  }
}

const writers = new WeakMap<TraceDb, GroupWriter>();

/** Writes `batch` with whatever else is waiting on `db`; resolves once it is committed. */
export function writeBatch(
  db: TraceDb,
  batch: BatchToWrite,
): Promise<BatchPlan> {
  let writer = writers.get(db);
  if (!writer) {
    writer = new GroupWriter(db);
    writers.set(db, writer);
  }
  return writer.write(batch);
}
