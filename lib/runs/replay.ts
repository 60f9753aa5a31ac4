/**
 * Replaying a saved regression: fresh synthetic data through the same
 * lifecycle, against the registered target, under the pinned contract.
 * Drift of the target config, the protocol revision or the contract refuses
 * the replay before any request is sent. The replay link is appended in the
 * same transaction as the report, and the outcome carries the regression as
 * that link left it.
 *
 * @module
 */

import type { TraceDb } from "../db.ts";
import { NotFoundError, RefusedError } from "../errors.ts";
import {
  readRegression,
  regressionAfter,
  type RegressionView,
  replayDrift,
  replayLink,
} from "../ledger/regressions.ts";
import { refuseRetired } from "../ledger/retirements.ts";
import { requireLedger } from "../ledger/schema.ts";
import { readTarget, type TargetRecord, targetRef } from "../ledger/targets.ts";
import {
  type ExternalRunOptions,
  type ExternalRunOutcome,
  runExternal,
} from "./external_run.ts";
import { clipValue } from "../echo.ts";

/** Options for {@link replayRegression}: those of a run, minus what the regression fixes. */
export type ReplayOptions = Omit<
  ExternalRunOptions,
  "db" | "target" | "linked" | "regressionId"
>;

/**
 * A finished replay: the run's outcome and the regression after it (as it
 * was before the run when the report could not be recorded in the ledger).
 */
export interface ReplayOutcome extends ExternalRunOutcome {
  /** The regression after this replay. */
  regression: RegressionView;
}

/** A regression checked for replay, with its registered target. */
export interface PreparedReplay {
  regression: RegressionView;
  target: TargetRecord;
}

/** Checks a regression can be replayed by this build; refuses drift before any request. */
export async function prepareReplay(
  db: TraceDb,
  regressionId: string,
): Promise<PreparedReplay> {
  await requireLedger(db);
  const regression = await readRegression(db, regressionId);
  if (!regression) {
    throw new NotFoundError(
      `Cannot find regression ${
        clipValue(regressionId)
      }; list them with trace external-regressions`,
    );
  }
  const target = await readTarget(db, regression.definition.target.id);
  await refuseRetired(
    db,
    regression.definition.target.id,
    `replay regression ${regressionId}`,
  );
  const problems = replayDrift(regression.definition, target);
  if (problems.length > 0 || !target) {
    throw new RefusedError(
      `Cannot replay regression ${regressionId}: ${
        problems.join("; ")
      }; save a new regression from a fresh run instead`,
    );
  }
  return { regression, target };
}

/** Replays a prepared regression and records the run and its replay link atomically. */
export async function runReplay(
  db: TraceDb,
  prepared: PreparedReplay,
  options: ReplayOptions,
): Promise<ReplayOutcome> {
  const link = replayLink(prepared.regression.regression_id);
  const outcome = await runExternal(prepared.target.config, {
    ...options,
    db,
    target: targetRef(prepared.target),
    linked: link.entries,
    regressionId: prepared.regression.regression_id,
  });
  const record = outcome.recording.kept_in === "ledger" ? link.record() : null;
  return {
    ...outcome,
    regression: record
      ? regressionAfter(prepared.regression, record)
      : prepared.regression,
  };
}

/** Replays a regression: {@link prepareReplay}, then {@link runReplay}. */
export async function replayRegression(
  db: TraceDb,
  regressionId: string,
  options: ReplayOptions,
): Promise<ReplayOutcome> {
  return await runReplay(db, await prepareReplay(db, regressionId), options);
}
