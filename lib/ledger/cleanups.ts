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

/**
 * What a cleanup after the fact found, as `external-cleanup --json` names
 * it: `complete` (every store at 0 and neither marker retrievable),
 * `inventories_clear` (no markers to query; every store at 0, retrieval not
 * checked) or `incomplete` (records may remain or still be served).
 */
export type CleanupStatus = "complete" | "inventories_clear" | "incomplete";

/** The status of `record`'s outcome. */
export function cleanupStatus(record: CleanupRecord): CleanupStatus {
  if (!record.outcome.cleanup_complete) return "incomplete";
  return markersQueried(record) ? "complete" : "inventories_clear";
}

/**
 * A cleanup's deletions counted two ways: requests (one per namespace, and
 * one more each time its records came back) and the ids they named.
 */
export interface DeletionCounts {
  /** Delete requests sent, repeats included. */
  delete_requests: number;
  /** Of those, the ones the adapter acknowledged. */
  delete_requests_acknowledged: number;
  /** Distinct issued ids that an acknowledged delete request named. */
  deleted_ids: number;
  /** Distinct issued ids that any delete request named. */
  ids_to_delete: number;
}

/** Counts `cleanup`'s deletions; a repeated request names the same ids again, so ids count once per namespace. */
export function deletionCounts(cleanup: Cleanup): DeletionCounts {
  const named = new Map<string, number>();
  const deleted = new Map<string, number>();
  for (const d of cleanup.deletes) {
    named.set(d.namespace, Math.max(named.get(d.namespace) ?? 0, d.ids));
    if (!d.acknowledged) continue;
    deleted.set(d.namespace, Math.max(deleted.get(d.namespace) ?? 0, d.ids));
  }
  const sum = (counts: Map<string, number>) =>
    [...counts.values()].reduce((total, n) => total + n, 0);
  return {
    delete_requests: cleanup.deletes.length,
    delete_requests_acknowledged:
      cleanup.deletes.filter((d) => d.acknowledged).length,
    deleted_ids: sum(deleted),
    ids_to_delete: sum(named),
  };
}

/** What a later `external-cleanup` of a run found, as run views and comparisons show it. */
export interface LaterCleanup extends DeletionCounts {
  /** The cleanup's ledger id. */
  cleanup_id: string;
  /** When it finished, ISO 8601. */
  finished_at: string;
  /** Its status, as `external-cleanup --json` gave it. */
  status: CleanupStatus;
  /** Whether it left nothing it could check. */
  cleanup_complete: boolean;
  /**
   * Whether it queried the run's markers: only then does `cleanup_complete`
   * mean neither marker was retrievable (without, only both inventories read 0).
   */
  markers_queried: boolean;
  /** Whether each marker was retrievable at its last poll (`null`: not queried, or the query failed). */
  marker_seen: Cleanup["marker_seen"];
  /** What it left, in words. */
  problems: string[];
}

/** `record` as run views and comparisons show it. */
export function laterCleanupOf(record: CleanupRecord): LaterCleanup {
  return {
    cleanup_id: record.cleanup_id,
    finished_at: record.finished_at,
    status: cleanupStatus(record),
    cleanup_complete: record.outcome.cleanup_complete,
    markers_queried: markersQueried(record),
    marker_seen: record.outcome.marker_seen,
    ...deletionCounts(record.outcome),
    problems: record.outcome.problems,
  };
}

/**
 * Whether a later cleanup found the application still serving the run's
 * text after deleting it: another cleanup cannot change that until the
 * application is fixed.
 */
export function stillServed(later: Pick<LaterCleanup, "marker_seen">): boolean {
  return later.marker_seen.test === true || later.marker_seen.control === true;
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
