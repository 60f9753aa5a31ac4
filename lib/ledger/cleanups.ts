/**
 * Cleanups run after the fact (`external-cleanup`): each attempt is an
 * append-only `cleanup` entry in the chain, linked to its run by run id and
 * target, never an edit of the run's own report.
 *
 * @module
 */

import type { TraceDb } from "../db.ts";
import type { Cleanup } from "../runner/report.ts";
import { appendEntry, listEntries } from "./chain.ts";
import { headAfter, type LedgerHead } from "./head.ts";

/** One cleanup of a run's synthetic records, as chained. */
export interface CleanupRecord {
  /** Format identifier. */
  schema: "trace.cleanup/1";
  /** The cleanup's own id. */
  cleanup_id: string;
  /** The run whose ids were deleted. */
  run_id: string;
  /** The target the run was about. */
  target_id: string;
  /** Where the ids came from: the completed report, or the checkpoint of an interrupted run. */
  ids_from: "report" | "checkpoint";
  /** The run's test and control namespaces. */
  namespaces: { test: string; control: string };
  /** How many ids of each namespace were deleted. */
  issued: { test: number; control: number };
  /** When the cleanup started, ISO 8601. */
  started_at: string;
  /** When it finished, ISO 8601. */
  finished_at: string;
  /**
   * Whether each poll queried the run's markers, as the run's own cleanup
   * does: `false` (or absent, in entries written before runs kept their
   * markers) for a run kept without them, whose inventories alone were read.
   */
  markers_queried?: boolean;
  /** The outcome, in the shape of a report's cleanup (`marker_seen` null when the markers were not queried). */
  outcome: Cleanup;
}

/** Whether `record` queried the run's markers: only then does a complete one mean nothing is retrievable. */
export function markersQueried(record: CleanupRecord): boolean {
  return record.markers_queried === true;
}

/** A cleanup and where it is in the ledger. */
export interface RecordedCleanup {
  record: CleanupRecord;
  seq: number;
  head: LedgerHead;
}

/** Appends a cleanup record to the chain. */
export async function recordCleanup(
  db: TraceDb,
  record: CleanupRecord,
): Promise<RecordedCleanup> {
  const entry = await appendEntry(db, {
    kind: "cleanup",
    entityId: record.cleanup_id,
    targetId: record.target_id,
    payload: record,
  });
  return { record, seq: entry.seq, head: await headAfter(db, entry) };
}

/** The cleanups of one run, oldest first. */
export async function cleanupsOf(
  db: TraceDb,
  runId: string,
  targetId: string,
): Promise<CleanupRecord[]> {
  return (await listEntries(db, "cleanup", targetId))
    .map((entry) => JSON.parse(entry.payload) as CleanupRecord)
    .filter((record) => record.run_id === runId);
}

/** The latest cleanup of every run that has one, by run id. */
export async function latestCleanups(
  db: TraceDb,
): Promise<Map<string, CleanupRecord>> {
  const latest = new Map<string, CleanupRecord>();
  for (const entry of await listEntries(db, "cleanup")) {
    const record = JSON.parse(entry.payload) as CleanupRecord;
    latest.set(record.run_id, record);
  }
  return latest;
}
