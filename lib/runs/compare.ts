/** Comparing two stored external runs (typically a failing run and its replay). */

import type { TraceDb } from "../db.ts";
import { NotFoundError, RefusedError } from "../errors.ts";
import { latestCleanups } from "../ledger/cleanups.ts";
import { compareRuns, type RunComparison } from "../ledger/compare.ts";
import { readStoredRun, validateRunId } from "../ledger/runs.ts";
import { requireLedger } from "../ledger/schema.ts";
import { readTarget } from "../ledger/targets.ts";
import { systemOfTarget } from "../reference/systems.ts";
import type { RunReport } from "../runner/report.ts";

/**
 * Compares two completed external runs from the ledger, each with its latest
 * `external-cleanup`; refuses different targets or contracts. Before and
 * after follow the runs' start times, whichever order they are given in:
 * `a` is the run that started first (see {@link inStartOrder}).
 */
export async function compareStoredRuns(
  db: TraceDb,
  runA: string,
  runB: string,
): Promise<RunComparison> {
  [runA, runB].forEach(validateRunId);
  await requireLedger(db);
  const [a, b] = inStartOrder(
    ...(await Promise.all(
      [runA, runB].map((id) => storedReport(db, id)),
    )) as [RunReport, RunReport],
  );
  // One read of the cleanup entries serves both runs.
  const later = await latestCleanups(db);
  return compareRuns(a, b, {
    laterCleanups: {
      a: later.get(a.run_id) ?? null,
      b: later.get(b.run_id) ?? null,
    },
    // external-cleanup reaches a run's adapter through its registered target only.
    targetRegistered: (await readTarget(db, a.target.id)) !== null,
  });
}

/**
 * Two runs as before and after: the one that started first, then the
 * other, so "fixed" and "new" mean what they say even when the runs are
 * given newest first. Runs that started at the same instant (a virtual
 * clock, a clock that stepped back) keep the order given: their ids would
 * order them by a random suffix.
 */
export function inStartOrder(
  first: RunReport,
  second: RunReport,
): [RunReport, RunReport] {
  const later = Date.parse(first.started_at) > Date.parse(second.started_at);
  return later ? [second, first] : [first, second];
}

async function storedReport(db: TraceDb, runId: string): Promise<RunReport> {
  const stored = await readStoredRun(db, "external", validateRunId(runId));
  if (!stored) await refuseReferenceRun(db, runId);
  if (!stored) {
    throw new NotFoundError(
      `Cannot compare: no completed external run ${runId} in the ledger; see trace external-show ${runId}`,
    );
  }
  return stored.report;
}

/** A reference run is stored, but it is no external run: say what it is instead of "not found". */
async function refuseReferenceRun(db: TraceDb, runId: string): Promise<void> {
  const reference = await readStoredRun(db, "reference", runId);
  if (!reference) return;
  throw new RefusedError(
    `Cannot compare run ${runId}: it is a reference run of system ${
      systemOfTarget(reference.report.target.id) ?? reference.report.target.id
    }, and external-compare compares external runs of one target; see trace reference show ${runId}`,
  );
}
