/**
 * Reference history: the ledger's `reference_run` entries only, so reference
 * runs never show up in external comparisons and external runs never show up
 * on the reference dashboard. Every read goes through the ledger's verified
 * readers. Reading never creates a table: a database that was never written
 * to simply has no history.
 *
 * @module
 */

import type { TraceDb } from "../db.ts";
import {
  latestRunPerTarget,
  listRuns,
  readStoredRun,
  type StoredRun,
} from "../ledger/runs.ts";
import { hasLedger } from "../ledger/schema.ts";
import type { RunReport } from "../runner/report.ts";
import { referenceTargetId, systemOfTarget } from "./systems.ts";

/** One stored reference run. */
export interface ReferenceRunEntry {
  seq: number;
  run_id: string;
  /** System name from the target id, `null` for an unknown target. */
  system: string | null;
  created_at: string;
  report: RunReport;
}

function toEntry(stored: StoredRun): ReferenceRunEntry {
  return {
    seq: stored.seq,
    run_id: stored.run_id,
    system: systemOfTarget(stored.target_id ?? ""),
    created_at: stored.created_at,
    report: stored.report,
  };
}

/** Options for {@link listReferenceRuns}. */
export interface ListReferenceRunsOptions {
  /** Only runs of this system. */
  system?: string;
  /** Newest first, at most this many (default 50). */
  limit?: number;
}

/** Stored reference runs, newest first. */
export async function listReferenceRuns(
  db: TraceDb,
  options: ListReferenceRunsOptions = {},
): Promise<ReferenceRunEntry[]> {
  if (!await hasLedger(db)) return [];
  const runs = await listRuns(db, "reference", {
    limit: options.limit ?? 50,
    ...(options.system === undefined
      ? {}
      : { targetId: referenceTargetId(options.system) }),
  });
  return runs.map(toEntry);
}

/** The newest stored run of each system, keyed by system name. */
export async function latestReferenceRuns(
  db: TraceDb,
): Promise<Map<string, ReferenceRunEntry>> {
  const latest = new Map<string, ReferenceRunEntry>();
  if (!await hasLedger(db)) return latest;
  for (const stored of await latestRunPerTarget(db, "reference")) {
    const entry = toEntry(stored);
    if (entry.system !== null) latest.set(entry.system, entry);
  }
  return latest;
}

/** One stored reference run by id, or `null` (external runs are never returned). */
export async function readReferenceRun(
  db: TraceDb,
  runId: string,
): Promise<ReferenceRunEntry | null> {
  if (!await hasLedger(db)) return null;
  const stored = await readStoredRun(db, "reference", runId);
  return stored ? toEntry(stored) : null;
}

/**
 * Whether `runId` is a stored external run: a reader of the reference
 * history that finds no such run can then point at the external one.
 */
export async function isExternalRun(
  db: TraceDb,
  runId: string,
): Promise<boolean> {
  if (!await hasLedger(db)) return false;
  return await readStoredRun(db, "external", runId) !== null;
}
