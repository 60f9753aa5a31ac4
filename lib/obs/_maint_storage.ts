/**
 * Database size before and after a destructive maintenance step, and the step
 * that actually returns freed pages to the file system: an incremental vacuum
 * when the database was created with `auto_vacuum = INCREMENTAL`, otherwise a
 * full `VACUUM`, then a WAL checkpoint that truncates the log.
 *
 * @module
 */

import type { TraceDb } from "../db.ts";

/** Ways freed pages can be given back. */
export const RECLAIM_METHODS = [
  "incremental_vacuum",
  "vacuum",
  "none",
] as const;
/** One of {@link RECLAIM_METHODS}. */
export type ReclaimMethod = typeof RECLAIM_METHODS[number];

/** Size of the database before a step. */
export interface StorageBefore {
  /** `page_count * page_size` before. */
  bytes_before: number;
  /** Database plus WAL file size before (`null` for a remote database). */
  file_bytes_before: number | null;
}

/** Size before and after, and what was given back. */
export interface StorageReport extends StorageBefore {
  bytes_after: number;
  bytes_reclaimed: number;
  file_bytes_after?: number | null;
  method: ReclaimMethod;
  /** Why nothing was reclaimed, when a vacuum was refused. */
  note?: string;
}

async function pragmaNumber(db: TraceDb, name: string): Promise<number> {
  const result = await db.client.execute(`PRAGMA ${name}`);
  const row = result.rows[0];
  return row ? Number(Object.values(row)[0] ?? 0) : 0;
}

async function logicalBytes(db: TraceDb): Promise<number> {
  return (await pragmaNumber(db, "page_count")) *
    (await pragmaNumber(db, "page_size"));
}

async function fileBytes(db: TraceDb): Promise<number | null> {
  if (!db.path) return null;
  let total = 0;
  for (const path of [db.path, `${db.path}-wal`]) {
    try {
      total += (await Deno.stat(path)).size;
    } catch {
      // No WAL file yet: it counts as zero bytes.
    }
  }
  return total;
}

async function checkpoint(db: TraceDb): Promise<void> {
  if (!db.path) return;
  try {
    await db.client.execute("PRAGMA wal_checkpoint(TRUNCATE)");
  } catch {
    // A busy reader keeps the log for now; the next checkpoint truncates it.
  }
}

/** Measures the database before a destructive step. */
export async function measureStorage(db: TraceDb): Promise<StorageBefore> {
  await checkpoint(db);
  return {
    bytes_before: await logicalBytes(db),
    file_bytes_before: await fileBytes(db),
  };
}

/** Returns free pages to the file system and reports the bytes reclaimed. */
export async function reclaimStorage(
  db: TraceDb,
  before: StorageBefore,
): Promise<StorageReport> {
  let method: ReclaimMethod = "none";
  let note: string | undefined;
  if (await pragmaNumber(db, "freelist_count") > 0) {
    const incremental = (await pragmaNumber(db, "auto_vacuum")) === 2;
    method = incremental ? "incremental_vacuum" : "vacuum";
    try {
      await db.client.execute(
        incremental ? "PRAGMA incremental_vacuum" : "VACUUM",
      );
    } catch (error) {
      method = "none";
      note = `vacuum refused (${
        (error as { code?: string }).code ?? "error"
      }); run it later`;
    }
  }
  await checkpoint(db);
  const after = await logicalBytes(db);
  return {
    ...before,
    bytes_after: after,
    bytes_reclaimed: Math.max(0, before.bytes_before - after),
    file_bytes_after: await fileBytes(db),
    method,
    ...(note ? { note } : {}),
  };
}
