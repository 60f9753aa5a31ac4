/**
 * Saved regressions as entry points see them: saving a run (with the reason
 * a run that only has a checkpoint cannot be saved), listing them, and the
 * gate over enforced ones. Replays are in `replay.ts`.
 *
 * @module
 */

import type { TraceDb } from "../db.ts";
import { NotFoundError, RefusedError } from "../errors.ts";
import {
  gateRegressions,
  type GateResult,
  listRegressions,
  type RegressionView,
  type SavedRegression,
  saveRegression,
} from "../ledger/regressions.ts";
import { headView, ledgerHead } from "../ledger/head.ts";
import { validateRunId } from "../ledger/runs.ts";
import { requireLedger } from "../ledger/schema.ts";
import { readTarget, validateTargetId } from "../ledger/targets.ts";
import { readCheckpoint } from "../runner/checkpoint.ts";

/** Options for {@link saveRun}. */
export interface SaveRunOptions {
  /** Where checkpoints are, to explain why a run that never completed cannot be saved. */
  dataDir?: string;
}

/** Saves a completed FAIL as a regression; a run that never completed is refused with the reason. */
export async function saveRun(
  db: TraceDb,
  runId: string,
  options: SaveRunOptions = {},
): Promise<SavedRegression> {
  validateRunId(runId);
  try {
    return await saveRegression(db, runId);
  } catch (error) {
    if (!(error instanceof NotFoundError) || !options.dataDir) throw error;
    if (!await readCheckpoint(options.dataDir, runId)) throw error;
    throw new RefusedError(
      `Cannot save run ${runId} as a regression: it never completed (only a checkpoint exists, so it is running or interrupted); only a completed FAIL can be saved`,
    );
  }
}

/** Saved regressions, optionally of one target, which must be registered. */
export async function regressionsOf(
  db: TraceDb,
  targetId?: string,
): Promise<RegressionView[]> {
  return await listRegressions(db, await targetFilter(db, targetId));
}

/**
 * The gate over enforced regressions, optionally of one registered target,
 * with the verified ledger head it judged (for CI logs to keep). A broken
 * ledger throws: a gate never passes on evidence it cannot trust.
 */
export async function gate(
  db: TraceDb,
  targetId?: string,
): Promise<GateResult> {
  const target = await targetFilter(db, targetId);
  const regressions = await listRegressions(db, target);
  return gateRegressions(
    regressions,
    target ?? null,
    headView(await ledgerHead(db)),
  );
}

async function targetFilter(
  db: TraceDb,
  targetId: string | undefined,
): Promise<string | undefined> {
  await requireLedger(db);
  if (targetId === undefined) return undefined;
  validateTargetId(targetId);
  if (!await readTarget(db, targetId)) {
    throw new NotFoundError(
      `Cannot find target "${targetId}"; see trace external-targets`,
    );
  }
  return targetId;
}
