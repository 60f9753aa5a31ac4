/**
 * Reference history: reads `reference_run` ledger entries only, so reference
 * runs never show up in external comparisons and external runs never show up
 * on the reference dashboard. Reading never creates a table: a database that
 * was never written to simply has no history.
 *
 * @module
 */

import { appliedVersions, type TraceDb } from "../db.ts";
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

const COLUMNS = "seq, entity_id, target_id, payload, created_at";

function toEntry(row: Record<string, unknown>): ReferenceRunEntry {
  const targetId = row.target_id === null ? "" : String(row.target_id);
  return {
    seq: Number(row.seq),
    run_id: String(row.entity_id),
    system: systemOfTarget(targetId),
    created_at: String(row.created_at),
    report: JSON.parse(String(row.payload)) as RunReport,
  };
}

async function hasLedger(db: TraceDb): Promise<boolean> {
  return (await appliedVersions(db)).has("ledger");
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
  const limit = options.limit ?? 50;
  const result = options.system === undefined
    ? await db.client.execute({
      sql: `SELECT ${COLUMNS} FROM ledger_entries
            WHERE kind = 'reference_run' ORDER BY seq DESC LIMIT ?`,
      args: [limit],
    })
    : await db.client.execute({
      sql: `SELECT ${COLUMNS} FROM ledger_entries
            WHERE kind = 'reference_run' AND target_id = ? ORDER BY seq DESC LIMIT ?`,
      args: [referenceTargetId(options.system), limit],
    });
  return result.rows.map((row) => toEntry(row as Record<string, unknown>));
}

/** The newest stored run of each system, keyed by system name. */
export async function latestReferenceRuns(
  db: TraceDb,
): Promise<Map<string, ReferenceRunEntry>> {
  const latest = new Map<string, ReferenceRunEntry>();
  if (!await hasLedger(db)) return latest;
  const result = await db.client.execute(
    `SELECT ${COLUMNS} FROM ledger_entries WHERE seq IN (
       SELECT MAX(seq) FROM ledger_entries WHERE kind = 'reference_run' GROUP BY target_id
     ) ORDER BY seq`,
  );
  for (const row of result.rows) {
    const entry = toEntry(row as Record<string, unknown>);
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
  const result = await db.client.execute({
    sql: `SELECT ${COLUMNS} FROM ledger_entries
          WHERE kind = 'reference_run' AND entity_id = ?`,
    args: [runId],
  });
  const row = result.rows[0];
  return row ? toEntry(row as Record<string, unknown>) : null;
}
