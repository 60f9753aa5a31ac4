/** Comparing two stored external runs (typically a failing run and its replay). */

import type { TraceDb } from "../db.ts";
import { NotFoundError } from "../errors.ts";
import { compareRuns, type RunComparison } from "../ledger/compare.ts";
import { readStoredRun, validateRunId } from "../ledger/runs.ts";
import { requireLedger } from "../ledger/schema.ts";
import type { RunReport } from "../runner/report.ts";

/** Compares two completed external runs from the ledger; refuses different targets or contracts. */
export async function compareStoredRuns(
  db: TraceDb,
  runA: string,
  runB: string,
): Promise<RunComparison> {
  [runA, runB].forEach(validateRunId);
  await requireLedger(db);
  const [a, b] = await Promise.all(
    [runA, runB].map((id) => storedReport(db, id)),
  );
  return compareRuns(a!, b!);
}

async function storedReport(db: TraceDb, runId: string): Promise<RunReport> {
  const stored = await readStoredRun(db, "external", validateRunId(runId));
  if (!stored) {
    throw new NotFoundError(
      `Cannot compare: no completed external run ${runId} in the ledger; see trace external-show ${runId}`,
    );
  }
  return stored.report;
}
