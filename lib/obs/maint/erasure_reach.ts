/**
 * Whether an applied erasure has reached the database file.
 *
 * An erasure's deletes commit together with its receipt; the erased text
 * leaves `trace.db` and its WAL only once the WAL is checkpointed and
 * truncated after that commit. A process that ends in between (a second
 * Ctrl-C, a kill, a crash, or a reader that keeps the WAL) leaves a
 * committed receipt while the text is still in the file. So each erasure of
 * a local file records, inside its own transaction, that it has not reached
 * the file yet: an `obs_state` row keyed by its receipt id, holding the
 * receipt's ledger entry number (no subject, no id of anything erased). A
 * checkpoint that completes after the commit takes the row away again:
 * the erasure's own, {@link finishErasures} later, the checkpoint any
 * writing command makes as it closes ({@link lastUnreachedSeq}), or a
 * server's background checkpoint ({@link erasureTruncation}).
 *
 * {@link erasureReachedFile} answers for one receipt: not yet while its row
 * is there, unless the WAL is empty now (then every commit is in the file,
 * whoever checkpointed it). A receipt made before these rows existed reads
 * as reached.
 *
 * @module
 */

import { checkpointWal, type TraceDb } from "../../db.ts";
import type { WalTruncation } from "../ingest/mod.ts";
import {
  measureStorage,
  reclaimStorageAndWal,
  type StorageReport,
} from "./_storage.ts";
import type { ErasureExecutor } from "./erasure_participants.ts";

const PREFIX = "erasure.unreached:";
/** Keys from {@link PREFIX} up to here are the records: a range of the primary key. */
const PREFIX_END = "erasure.unreached;";

/** Records, inside an erasure's transaction, that receipt `receiptId` (ledger entry `seq`) has not reached the file yet. */
export async function markUnreachedIn(
  tx: ErasureExecutor,
  receiptId: string,
  seq: number,
  now: number,
): Promise<void> {
  await tx.execute({
    sql: `INSERT INTO obs_state (key, value, updated_at) VALUES (?, ?, ?)
          ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
    args: [PREFIX + receiptId, String(seq), now],
  });
}

/**
 * Records that every erasure up to ledger entry `upToSeq` reached the file:
 * call it only after a checkpoint that began after their commits completed.
 * That record is a write too: the WAL is truncated again after it (unless
 * `truncate` is false), so the file alone holds everything, as the erasure
 * left it.
 */
export async function settleUnreached(
  db: TraceDb,
  upToSeq: number,
  options: { truncate?: boolean } = {},
): Promise<void> {
  const result = await db.client.execute({
    sql: `DELETE FROM obs_state WHERE key >= ? AND key < ?
            AND CAST(value AS INTEGER) <= ?`,
    args: [PREFIX, PREFIX_END, upToSeq],
  });
  if (result.rowsAffected > 0 && options.truncate !== false) {
    await checkpointWal(db);
  }
}

/**
 * What a server's background checkpoints (`startBackgroundCheckpoints`)
 * need to bring erasures into the file: while one is recorded as not there
 * yet, they truncate the WAL, and a truncation that completes settles every
 * erasure recorded before it began. The record's own removal is left to the
 * next background checkpoint: it names no erased text, and truncating on
 * the thread that serves requests would make them wait.
 */
export function erasureTruncation(db: TraceDb): WalTruncation {
  return {
    waiting: () => lastUnreachedSeq(db),
    reached: (seq) => settleUnreached(db, seq, { truncate: false }),
  };
}

/**
 * The ledger entry of the newest erasure recorded as not in the file yet,
 * or `null` (none, or no index in this database). Read it before a
 * checkpoint: once that checkpoint completes, {@link settleUnreached} up to
 * it, and never past it (an erasure committed meanwhile is not covered).
 */
export async function lastUnreachedSeq(db: TraceDb): Promise<number | null> {
  if (db.path === null || !(await hasStateTable(db))) return null;
  // One row whatever the backlog: every writing command asks on its way out.
  const result = await db.client.execute({
    sql: `SELECT MAX(CAST(value AS INTEGER)) AS seq FROM obs_state
          WHERE key >= ? AND key < ?`,
    args: [PREFIX, PREFIX_END],
  });
  const seq = result.rows[0]?.seq;
  return seq === null || seq === undefined ? null : Number(seq);
}

/** Whether the index's state table exists (a ledger-only database has none). */
async function hasStateTable(db: TraceDb): Promise<boolean> {
  const table = await db.client.execute(
    "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'obs_state'",
  );
  return table.rows.length > 0;
}

/** An erasure recorded as not in the file yet. */
interface Unreached {
  receipt_id: string;
  seq: number;
}

/** The records, oldest first; none in a database without the index's tables. */
async function unreachedRows(db: TraceDb): Promise<Unreached[]> {
  if (!(await hasStateTable(db))) return [];
  const result = await db.client.execute({
    sql: `SELECT key, value FROM obs_state WHERE key >= ? AND key < ?
          ORDER BY CAST(value AS INTEGER)`,
    args: [PREFIX, PREFIX_END],
  });
  return result.rows.map((row) => ({
    receipt_id: String(row.key).slice(PREFIX.length),
    seq: Number(row.value),
  }));
}

/** True when the local file's WAL holds no frame: everything committed is in `trace.db` itself. */
async function walEmpty(path: string): Promise<boolean> {
  try {
    return (await Deno.stat(`${path}-wal`)).size === 0;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return true;
    return false;
  }
}

/**
 * Receipt ids of the erasures that have not reached the database file yet;
 * none for a remote database (its server's own settings decide).
 */
export async function unreachedErasures(db: TraceDb): Promise<string[]> {
  if (db.path === null) return [];
  const rows = await unreachedRows(db);
  if (rows.length === 0 || await walEmpty(db.path)) return [];
  return rows.map((row) => row.receipt_id);
}

/**
 * Whether the erasure of receipt `receiptId` reached the database file:
 * `false` while the checkpoint after it has not completed (the erased text
 * may still be in `trace.db` or its WAL), `null` for a remote database.
 */
export async function erasureReachedFile(
  db: TraceDb,
  receiptId: string,
): Promise<boolean | null> {
  if (db.path === null) return null;
  return !(await unreachedErasures(db)).includes(receiptId);
}

/** What {@link finishErasures} did. */
export interface ErasureFinish {
  /** Format identifier. */
  schema: "trace.erasure-finish/1";
  /** Receipts of the erasures that had not reached the file, oldest first. */
  receipts: string[];
  /** They all reached it now; false when a reader kept the WAL; `null` for a remote database. */
  reached_file: boolean | null;
  /** Freed pages returned and the WAL truncated (bytes before and after); `null` remote. */
  storage: StorageReport | null;
}

/**
 * Completes erasures that committed but have not reached the file: returns
 * freed pages, checkpoints and truncates the WAL, and once that completes
 * records that they reached it.
 */
export async function finishErasures(db: TraceDb): Promise<ErasureFinish> {
  if (db.path === null || db.readOnly) {
    return {
      schema: "trace.erasure-finish/1",
      receipts: [],
      reached_file: db.path === null ? null : false,
      storage: null,
    };
  }
  const rows = await unreachedRows(db);
  const before = await measureStorage(db);
  const { storage, walTruncated: complete } = await reclaimStorageAndWal(
    db,
    before,
  );
  const last = rows.at(-1);
  if (complete && last) await settleUnreached(db, last.seq);
  return {
    schema: "trace.erasure-finish/1",
    receipts: rows.map((row) => row.receipt_id),
    reached_file: complete,
    storage,
  };
}
