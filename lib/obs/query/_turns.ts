/**
 * Read statements of request paths take turns. The local libSQL client runs
 * each statement on the calling thread, so while one runs nothing else
 * does; and when many clients read at once, every statement that became
 * ready in one turn of the event loop runs before the loop looks at the
 * network again: twenty clients each a few statements in make every other
 * request (a health probe, a page) wait for all of them. Here the reads of
 * one database run one at a time, in arrival order; a read hands over to
 * the next at once until {@link READ_SLICE_MS} of reading have passed, then
 * through a timer, so the loop polls the network at least that often: a
 * request that reads nothing here waits for one slice and one statement,
 * not for every client's statements. Writes, health's own reads and its
 * latency samples ({@link outOfTurn}) do not queue here.
 *
 * @module
 */

import type { InStatement, ResultSet } from "@libsql/client";
import { AsyncLocalStorage } from "node:async_hooks";
import type { TraceDb } from "../../db.ts";

/** Reading hands over without a turn of the event loop for this long (ms). */
export const READ_SLICE_MS = 10;
/** Longest pause between two slices of queued reads (ms). */
const MAX_PAUSE_MS = 50;

interface Turns {
  busy: boolean;
  waiting: (() => void)[];
  /** When the current slice of reads began. */
  sliceStart: number;
}

const bypass = new AsyncLocalStorage<true>();

/** Runs `work` with its reads outside the line (health's latency samples: they time a statement, not the line). */
export function outOfTurn<T>(work: () => Promise<T>): Promise<T> {
  return bypass.run(true, work);
}

const turnsByDb = new WeakMap<TraceDb, Turns>();

function turnsOf(db: TraceDb): Turns {
  let turns = turnsByDb.get(db);
  if (!turns) {
    turns = { busy: false, waiting: [], sliceStart: 0 };
    turnsByDb.set(db, turns);
  }
  return turns;
}

/** Reads queued on `db` right now, the one running included (for tests). */
export function readsInLine(db: TraceDb): number {
  const turns = turnsByDb.get(db);
  return turns ? turns.waiting.length + (turns.busy ? 1 : 0) : 0;
}

/** Runs `read` once the reads of `db` queued before it have run. */
export async function inTurn<T>(
  db: TraceDb,
  read: () => Promise<T>,
): Promise<T> {
  if (bypass.getStore()) return await read();
  const turns = turnsOf(db);
  if (turns.busy) {
    // Woken by the read before it, which leaves `busy` set for it.
    await new Promise<void>((resolve) => turns.waiting.push(resolve));
  } else {
    turns.busy = true;
    turns.sliceStart = performance.now();
  }
  try {
    return await read();
  } finally {
    handOver(turns);
  }
}

function handOver(turns: Turns): void {
  const next = turns.waiting.shift();
  if (!next) {
    turns.busy = false;
  } else if (performance.now() - turns.sliceStart < READ_SLICE_MS) {
    next();
  } else {
    // As long as the slice took: reads queued behind others get at most
    // half of the thread, and the network the rest. The server accepts one
    // connection per turn of the loop, so the turns between slices must be
    // short and many, not one per slice.
    const slice = performance.now() - turns.sliceStart;
    setTimeout(() => {
      turns.sliceStart = performance.now();
      next();
    }, Math.min(slice, MAX_PAUSE_MS));
  }
}

/** `db.client.execute(statement)` in its turn. */
export function readStatement(
  db: TraceDb,
  statement: InStatement,
): Promise<ResultSet> {
  return inTurn(db, () => db.client.execute(statement));
}

/** `db.client.batch(statements, "read")` in one turn. */
export function readBatch(
  db: TraceDb,
  statements: InStatement[],
): Promise<ResultSet[]> {
  return inTurn(db, () => db.client.batch(statements, "read"));
}
