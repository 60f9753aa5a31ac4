/**
 * Replaying a saved regression: fresh synthetic data through the same
 * lifecycle, against the registered target, under the pinned contract.
 * Drift of the target config, the protocol revision or the contract refuses
 * the replay before any request is sent.
 *
 * @module
 */

import type { TraceDb } from "../db.ts";
import { NotFoundError, RefusedError } from "../errors.ts";
import { type ExternalRunOptions, runExternal } from "./external_run.ts";
import type { RunReport } from "../runner/report.ts";
import {
  readDefinition,
  readRegression,
  type RegressionDefinition,
  type RegressionView,
  replayDrift,
  replayEntry,
} from "../ledger/regressions.ts";
import { readTarget, type TargetRecord, targetRef } from "../ledger/targets.ts";

/** Options for {@link replayRegression}: those of a run, minus what the regression fixes. */
export type ReplayOptions = Omit<
  ExternalRunOptions,
  "db" | "target" | "linked"
>;

/** A finished replay: the run report and the regression after it. */
export interface ReplayResult {
  report: RunReport;
  regression: RegressionView;
}

/** Checks a regression can be replayed; returns its definition and target. */
export async function prepareReplay(
  db: TraceDb,
  regressionId: string,
): Promise<{ definition: RegressionDefinition; target: TargetRecord }> {
  const definition = await readDefinition(db, regressionId);
  if (!definition) {
    throw new NotFoundError(
      `Cannot find regression ${regressionId}; list them with trace external-regressions`,
    );
  }
  const target = await readTarget(db, definition.target.id);
  const problems = await replayDrift(definition, target);
  if (problems.length > 0 || !target) {
    throw new RefusedError(
      `Cannot replay regression ${regressionId}: ${
        problems.join("; ")
      }; save a new regression from a fresh run instead`,
    );
  }
  return { definition, target };
}

/** Replays a regression and records the run and its replay link atomically. */
export async function replayRegression(
  db: TraceDb,
  regressionId: string,
  options: ReplayOptions,
): Promise<ReplayResult> {
  const { target } = await prepareReplay(db, regressionId);
  const report = await runExternal(target.config, {
    ...options,
    db,
    target: targetRef(target),
    linked: replayEntry(regressionId),
  });
  const regression = await readRegression(db, regressionId);
  return { report, regression: regression! };
}
