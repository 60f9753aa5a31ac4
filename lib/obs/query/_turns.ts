/**
 * Read statements of request paths take turns. The local libSQL client runs
 * each statement on the calling thread, so while one runs nothing else
 * does; and when many clients read at once, every statement that became
 * ready in one turn of the event loop runs before the loop looks at the
 * network again: twenty clients each a few statements in make every other
 * request (a health probe, a page) wait for all of them. Here the reads of
 * one database run one at a time, in arrival order, in slices: a read
 * hands over to the next at once until {@link READ_SLICE_MS} of reading
 * have passed, then through a timer, so the loop polls the network at
 * least that often; one caller reading in a loop, whose reads resolve at
 * once and so never let the loop turn by themselves, waits for a turn past
 * a slice as well. A request that reads nothing here waits for one slice
 * and one statement, not for every client's statements. Writes, health's
 * own reads and its latency samples ({@link outOfTurn}) do not queue here.
 *
 * @module
 */

import type { InStatement, ResultSet } from "@libsql/client";
import { AsyncLocalStorage } from "node:async_hooks";
import type { TraceDb } from "../../db.ts";
import { TurnLine } from "../_turn_line.ts";

/** Reading hands over without a turn of the event loop for this long (ms). */
export const READ_SLICE_MS = 10;

const bypass = new AsyncLocalStorage<true>();
/** The database whose turn the current read holds: a read inside it runs at once instead of waiting for itself. */
const holding = new AsyncLocalStorage<TraceDb>();

/** Runs `work` with its reads outside the line (health's latency samples: they time a statement, not the line). */
export function outOfTurn<T>(work: () => Promise<T>): Promise<T> {
  return bypass.run(true, work);
}

const linesByDb = new WeakMap<TraceDb, TurnLine>();

function lineOf(db: TraceDb): TurnLine {
  let line = linesByDb.get(db);
  if (!line) {
    line = new TurnLine(READ_SLICE_MS);
    linesByDb.set(db, line);
  }
  return line;
}

/** Reads queued on `db` right now, the one running included (for tests). */
export function readsInLine(db: TraceDb): number {
  return linesByDb.get(db)?.length ?? 0;
}

/** Runs `read` once the reads of `db` queued before it have run. */
export async function inTurn<T>(
  db: TraceDb,
  read: () => Promise<T>,
): Promise<T> {
  if (bypass.getStore() || holding.getStore() === db) return await read();
  const line = lineOf(db);
  await line.take();
  try {
    return await holding.run(db, read);
  } finally {
    line.pass();
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
