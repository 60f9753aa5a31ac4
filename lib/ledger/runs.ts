/** Completed run reports in the ledger: external and reference history kept apart. */

import type { TraceDb } from "../db.ts";
import type { RunReport } from "../runner/report.ts";
import { appendEntry, type LedgerEntry, readEntry } from "./chain.ts";

/** Appends a completed report (external reports as `run`, reference ones as `reference_run`). */
export async function recordRun(
  db: TraceDb,
  report: RunReport,
): Promise<LedgerEntry> {
  if (report.state !== "completed") {
    throw new TypeError(
      `Cannot record run ${report.run_id}: only completed reports are stored`,
    );
  }
  const kind = report.kind === "reference" ? "reference_run" : "run";
  return await appendEntry(db, kind, report.run_id, report.target.id, report);
}

/** Reads a completed external run report, or `null`. */
export async function readRun(
  db: TraceDb,
  runId: string,
): Promise<RunReport | null> {
  const entry = await readEntry(db, "run", runId) ??
    await readEntry(db, "reference_run", runId);
  return entry ? JSON.parse(entry.payload) as RunReport : null;
}
