/**
 * Database size before and after a destructive maintenance step, and the step
 * that returns freed pages to the file system without holding writers off:
 *
 * - `auto_vacuum = INCREMENTAL`: `PRAGMA incremental_vacuum` in small steps
 *   (each its own short write), yielding between steps;
 * - `auto_vacuum = FULL`: SQLite already returned the pages at each commit;
 * - `auto_vacuum = NONE` (files created before incremental mode): freed pages
 *   stay inside the file and new rows reuse them. Only an explicit `vacuum`
 *   request runs a full `VACUUM` (an exclusive rewrite of the whole file),
 *   which also switches the file to incremental mode so later runs need none.
 *
 * Then a WAL checkpoint truncates the log, also when reclaiming is skipped:
 * only then do the deleted rows leave the database file. Sizes are those of the database
 * file plus its WAL on disk (pages for a remote database), measured honestly:
 * a checkpoint held back by a reader shows up as a larger WAL.
 *
 * @module
 */

import type { TraceDb } from "../../db.ts";
import { nextTurn } from "../_turn_line.ts";

/** Ways freed pages can be given back. */
export const RECLAIM_METHODS = [
  "incremental_vacuum",
  "auto_vacuum",
  "vacuum",
  "none",
] as const;
/** One of {@link RECLAIM_METHODS}. */
export type ReclaimMethod = typeof RECLAIM_METHODS[number];

/** SQLite `auto_vacuum` modes, by their pragma value 0, 1, 2. */
export const AUTO_VACUUM_MODES = ["none", "full", "incremental"] as const;
/** One of {@link AUTO_VACUUM_MODES}. */
export type AutoVacuumMode = typeof AUTO_VACUUM_MODES[number];

/** Pages one incremental step frees: a short write, then other work runs. */
export const INCREMENTAL_STEP_PAGES = 1_000;
/** Upper bound on steps per call (4 GiB at 4 KiB pages); the rest waits for the next run. */
const MAX_INCREMENTAL_STEPS = 1_000;

/** Size of the database before a step. */
export interface StorageBefore {
  /** `files`: the database file plus its WAL on disk; `pages`: page count times page size (remote). */
  measured: "files" | "pages";
  /** Size before the step, in bytes. */
  bytes_before: number;
}

/** Size before and after, and what was given back. */
export interface StorageReport extends StorageBefore {
  /** Size after the step, in bytes. */
  bytes_after: number;
  /** `bytes_before - bytes_after`, never negative. */
  bytes_reclaimed: number;
  /** Free pages still inside the file: new rows reuse them; only a vacuum returns them. */
  free_bytes_after: number;
  /** The file's auto-vacuum mode after the step. */
  auto_vacuum: AutoVacuumMode | "unknown";
  /** How pages were given back. */
  method: ReclaimMethod;
  /** `PRAGMA incremental_vacuum` steps run. */
  incremental_steps: number;
  /** Why fewer bytes came back than were freed, when known. */
  note?: string;
}

/** How the WAL is truncated: whether it completed (default {@link checkpoint}). */
export type WalTruncate = () => Promise<boolean>;

/** Options for {@link measureStorage}. */
export interface MeasureOptions {
  /**
   * Truncates the WAL (default: a checkpoint on `db`'s own connection,
   * which waits for a reader up to the busy timeout; a server passes its
   * background checkpointer's, which never waits).
   */
  truncate?: WalTruncate | undefined;
}

/** Options for {@link reclaimStorage}. */
export interface ReclaimOptions extends MeasureOptions {
  /**
   * Allow a full `VACUUM` when the file is not in incremental mode, switching
   * it to incremental on the way (default `false`).
   */
  vacuum?: boolean;
}

async function pragmaNumber(db: TraceDb, name: string): Promise<number> {
  const result = await db.client.execute(`PRAGMA ${name}`);
  const row = result.rows[0];
  return row ? Number(Object.values(row)[0] ?? 0) : 0;
}

async function pageBytes(db: TraceDb, pages: string): Promise<number> {
  return (await pragmaNumber(db, pages)) *
    (await pragmaNumber(db, "page_size"));
}

async function fileBytes(path: string): Promise<number> {
  let total = 0;
  for (const file of [path, `${path}-wal`]) {
    try {
      total += (await Deno.stat(file)).size;
    } catch {
      // No WAL file (yet): it counts as zero bytes.
    }
  }
  return total;
}

async function currentBytes(db: TraceDb): Promise<number> {
  return db.path ? await fileBytes(db.path) : await pageBytes(db, "page_count");
}

/** Truncates the WAL; false when a reader kept part of it. */
async function checkpoint(db: TraceDb): Promise<boolean> {
  if (!db.path) return true;
  try {
    const result = await db.client.execute("PRAGMA wal_checkpoint(TRUNCATE)");
    return Number(result.rows[0]?.busy ?? 0) === 0;
  } catch {
    return false;
  }
}

/** Truncates the WAL as `options` says (by default {@link checkpoint}); false when it did not complete. */
async function truncateWal(
  db: TraceDb,
  options: MeasureOptions,
): Promise<boolean> {
  return options.truncate ? await options.truncate() : await checkpoint(db);
}

async function autoVacuumMode(
  db: TraceDb,
): Promise<AutoVacuumMode | "unknown"> {
  try {
    return AUTO_VACUUM_MODES[await pragmaNumber(db, "auto_vacuum")] ??
      "unknown";
  } catch {
    return "unknown";
  }
}

/** Measures the database before a destructive step. */
export async function measureStorage(
  db: TraceDb,
  options: MeasureOptions = {},
): Promise<StorageBefore> {
  await truncateWal(db, options);
  return {
    measured: db.path ? "files" : "pages",
    bytes_before: await currentBytes(db),
  };
}

/** Frees up to every free page, {@link INCREMENTAL_STEP_PAGES} per step. */
async function incrementalVacuum(db: TraceDb): Promise<number> {
  let steps = 0;
  let free = await pragmaNumber(db, "freelist_count");
  while (free > 0 && steps < MAX_INCREMENTAL_STEPS) {
    // executeMultiple steps the pragma to completion; execute() would free
    // one page and leave the statement open.
    await db.client.executeMultiple(
      `PRAGMA incremental_vacuum(${INCREMENTAL_STEP_PAGES})`,
    );
    steps++;
    const left = await pragmaNumber(db, "freelist_count");
    if (left >= free) break;
    free = left;
    await nextTurn(); // other work on this connection runs between steps
  }
  return steps;
}

async function fullVacuum(db: TraceDb): Promise<void> {
  // One connection, no transaction: the mode takes effect through this VACUUM.
  await db.client.executeMultiple(
    "PRAGMA auto_vacuum = INCREMENTAL; VACUUM;",
  );
}

/** Returns free pages to the file system (as the file's mode allows) and reports the bytes. */
export async function reclaimStorage(
  db: TraceDb,
  before: StorageBefore,
  options: ReclaimOptions = {},
): Promise<StorageReport> {
  return (await reclaimStorageAndWal(db, before, options)).storage;
}

/**
 * {@link reclaimStorage}, and whether its WAL truncation completed: an
 * erasure's `reached_file` rests on it, without truncating a second time.
 */
export async function reclaimStorageAndWal(
  db: TraceDb,
  before: StorageBefore,
  options: ReclaimOptions = {},
): Promise<{ storage: StorageReport; walTruncated: boolean }> {
  const mode = await autoVacuumMode(db);
  let method: ReclaimMethod = "none";
  let steps = 0;
  const notes: string[] = [];
  try {
    if (mode === "incremental") {
      steps = await incrementalVacuum(db);
      method = "incremental_vacuum";
    } else if (mode === "full") {
      method = "auto_vacuum";
    } else if (options.vacuum) {
      await fullVacuum(db);
      method = "vacuum";
      notes.push(
        "the file was rewritten by a full VACUUM and switched to incremental auto-vacuum",
      );
    } else if (await pragmaNumber(db, "freelist_count") > 0) {
      notes.push(
        "auto-vacuum is off in this file: freed pages stay inside it for new rows; a one-time full VACUUM returns them and switches to incremental",
      );
    }
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    notes.push(
      `reclaiming was refused (${
        typeof code === "string" ? code : "error"
      }); run it again later`,
    );
  }
  const walTruncated = await truncateWal(db, options);
  if (!walTruncated) notes.push("a reader kept the WAL from being truncated");
  const storage: StorageReport = {
    ...before,
    ...await measuredAfter(db, before),
    auto_vacuum: method === "vacuum" ? await autoVacuumMode(db) : mode,
    method,
    incremental_steps: steps,
    ...(notes.length > 0 ? { note: notes.join("; ") } : {}),
  };
  return { storage, walTruncated };
}

/**
 * The report when reclaiming was skipped (`why` leads its note). The WAL is
 * still truncated: until
 * a checkpoint the database file keeps the deleted rows' old pages (the
 * zeroed ones are only in the WAL).
 */
export async function skippedReclaim(
  db: TraceDb,
  before: StorageBefore,
  why = "reclaiming was not requested",
): Promise<StorageReport> {
  const notes = [why];
  if (!await checkpoint(db)) {
    notes.push("a reader kept the WAL from being truncated");
  }
  return {
    ...before,
    ...await measuredAfter(db, before),
    auto_vacuum: await autoVacuumMode(db),
    method: "none",
    incremental_steps: 0,
    note: notes.join("; "),
  };
}

/** The file's size and free bytes now, and what was returned since `before`. */
async function measuredAfter(
  db: TraceDb,
  before: StorageBefore,
): Promise<
  Pick<StorageReport, "bytes_after" | "bytes_reclaimed" | "free_bytes_after">
> {
  const after = await currentBytes(db);
  return {
    bytes_after: after,
    bytes_reclaimed: Math.max(0, before.bytes_before - after),
    free_bytes_after: await pageBytes(db, "freelist_count"),
  };
}
