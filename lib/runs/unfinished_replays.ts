/**
 * Replays that never finished, as the gate judges them and the regression
 * listings show them (one rule for both). A replay killed mid-window leaves
 * its checkpoint (still `running`, naming the regression it replays) and
 * nothing in the ledger, whose latest replay of that regression is then an
 * older one, perhaps a PASS. A replay that started
 * after that one is the regression's latest: it did not pass (INCONCLUSIVE,
 * as every interrupted run), and a replay that completes later takes its
 * place again.
 *
 * @module
 */

import type { TraceDb } from "../db.ts";
import type {
  GateFailure,
  GateResult,
  RegressionView,
} from "../ledger/regressions.ts";
import { readRun } from "../ledger/runs.ts";
import type { Checkpoint } from "../runner/checkpoint.ts";
import type { RunReport } from "../runner/report.ts";
import { isSameProcess } from "./run_view.ts";

/** A replay that only its checkpoint knows: running now, or stopped. */
export interface UnfinishedReplay {
  run_id: string;
  regression_id: string;
  started_at: string;
  /** Whether the process that wrote its checkpoint still runs it. */
  running: boolean;
  pid: number;
}

/**
 * The newest unfinished replay of each regression among `checkpoints` (runs
 * the ledger does not hold that never completed), keyed by regression and
 * target. `isAlive` tells whether a checkpoint's writer still runs
 * (default: the same process, on this host).
 */
export function newestUnfinishedReplays(
  checkpoints: readonly Checkpoint[],
  isAlive?: (pid: number) => boolean,
): Map<string, UnfinishedReplay> {
  const newest = new Map<string, UnfinishedReplay>();
  for (const checkpoint of checkpoints) {
    const regressionId = checkpoint.regression_id;
    if (regressionId === null) continue;
    // A replay runs against its regression's target: a checkpoint naming
    // another is no replay of it (a damaged or hand-made file).
    const key = replayKey(regressionId, checkpoint.target.id);
    const known = newest.get(key);
    if (known && !startedAfter(checkpoint, known)) continue;
    const alive = isAlive ??
      ((pid: number) => isSameProcess(pid, checkpoint.process_identity));
    newest.set(key, {
      run_id: checkpoint.run_id,
      regression_id: regressionId,
      started_at: checkpoint.started_at,
      running: alive(checkpoint.pid),
      pid: checkpoint.pid,
    });
  }
  return newest;
}

/** The key of a regression's unfinished replays: the regression and its target. */
function replayKey(regressionId: string, targetId: string): string {
  return JSON.stringify([regressionId, targetId]);
}

function startedAfter(
  a: Pick<UnfinishedReplay, "started_at" | "run_id">,
  b: Pick<UnfinishedReplay, "started_at" | "run_id">,
): boolean {
  return a.started_at !== b.started_at
    ? a.started_at > b.started_at
    : a.run_id > b.run_id;
}

/** A replay that never finished, as a regression listing shows it. */
export interface UnfinishedReplayView {
  run_id: string;
  /** When it started, ISO 8601 (from its checkpoint). */
  started_at: string;
  /** Whether its process still runs it; `false`: it was killed or stopped. */
  running: boolean;
}

/**
 * A regression as the listings show it: with the replay the gate judges it
 * by when that one never finished.
 */
export interface ListedRegression extends RegressionView {
  /**
   * Its latest replay when that one never finished (killed, or still
   * running) and started after the latest one the ledger holds, so it did
   * not pass; `null` when the ledger's latest replay is the latest.
   */
  unfinished_replay: UnfinishedReplayView | null;
}

/**
 * By regression id, the replay among `unfinished` that is each of
 * `regressions`' latest (started after the latest one the ledger holds):
 * the rule the gate judges by. `reports` are latest replay reports the
 * caller has already read, by run id; only the others are read, once each.
 */
export async function latestUnfinishedReplays(
  db: TraceDb,
  regressions: readonly RegressionView[],
  unfinished: ReadonlyMap<string, UnfinishedReplay>,
  reports: ReadonlyMap<string, RunReport> = new Map(),
): Promise<Map<string, UnfinishedReplay>> {
  const latest = new Map<string, UnfinishedReplay>();
  for (const regression of regressions) {
    const replay = unfinished.get(
      replayKey(regression.regression_id, regression.target_id),
    );
    if (replay && await isLatest(db, replay, regression, reports)) {
      latest.set(regression.regression_id, replay);
    }
  }
  return latest;
}

/**
 * `regressions`, each with its replay among `latest` (of
 * {@link latestUnfinishedReplays}) when it has one.
 */
export function withLatestUnfinished(
  regressions: readonly RegressionView[],
  latest: ReadonlyMap<string, UnfinishedReplay>,
): ListedRegression[] {
  return regressions.map((regression) => {
    const replay = latest.get(regression.regression_id);
    return {
      ...regression,
      unfinished_replay: replay
        ? {
          run_id: replay.run_id,
          started_at: replay.started_at,
          running: replay.running,
        }
        : null,
    };
  });
}

/**
 * `judged` with each enforced regression whose latest replay is one that
 * never finished (its replay among `latest`, of
 * {@link latestUnfinishedReplays}) judged by that replay: not passed, with
 * the reason and what to do.
 */
export function withUnfinishedReplays(
  judged: GateResult,
  options: {
    regressions: readonly RegressionView[];
    latest: ReadonlyMap<string, UnfinishedReplay>;
    /** Appended to each command a reason names (the CLI's `--data-dir`/`--db`). */
    commandFlags?: string | undefined;
  },
): GateResult {
  if (options.latest.size === 0) return judged;
  const failing: GateFailure[] = [];
  for (const regression of options.regressions) {
    if (regression.status !== "enforced") continue;
    const replay = options.latest.get(regression.regression_id);
    if (replay) {
      failing.push(
        unfinishedFailure(regression, replay, options.commandFlags ?? ""),
      );
      continue;
    }
    failing.push(
      ...judged.failing.filter((f) =>
        f.regression_id === regression.regression_id
      ),
    );
  }
  return { ...judged, ok: failing.length === 0, failing };
}

/** Whether `replay` started after the latest replay the ledger holds of `regression`. */
async function isLatest(
  db: TraceDb,
  replay: UnfinishedReplay,
  regression: RegressionView,
  reports: ReadonlyMap<string, RunReport>,
): Promise<boolean> {
  const runId = regression.last_run_id;
  if (runId === null) return true;
  // The recorded replay's start, not its recording: of two overlapping
  // replays the one started last is the latest attempt, finished or not.
  const recorded = reports.get(runId) ?? await readRun(db, runId);
  return startedAfter(replay, {
    run_id: runId,
    started_at: recorded?.started_at ?? regression.last_replayed_at ?? "",
  });
}

function unfinishedFailure(
  regression: RegressionView,
  replay: UnfinishedReplay,
  flags: string,
): GateFailure {
  const run = replay.run_id;
  return {
    regression_id: regression.regression_id,
    target_id: regression.target_id,
    last_result: "INCONCLUSIVE",
    last_run_id: run,
    last_state: replay.running ? "running" : "interrupted",
    // It never reached a verdict, so it cannot say whether the failure came back.
    recurrence: { kind: "inconclusive" },
    reason: replay.running
      ? `latest replay ${run} has not finished (process ${replay.pid} is still running it), so it has not passed; run the gate again once it has finished`
      : `latest replay ${run} did not finish (it stopped before its report reached the ledger, so it is INCONCLUSIVE); remove what it may have left with trace external-cleanup ${run}${flags}, then replay again with trace external-replay ${regression.regression_id}${flags}`,
  };
}
