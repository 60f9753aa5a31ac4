/**
 * Saved regressions as entry points see them: saving a run (with the reason
 * a run that only has a checkpoint cannot be saved), listing them, and the
 * gate over enforced ones. Replays are in `replay.ts`.
 *
 * @module
 */

import { dbLocation, type TraceDb } from "../db.ts";
import {
  LedgerIntegrityError,
  NotFoundError,
  RefusedError,
  StorageError,
} from "../errors.ts";
import {
  gateRegressions,
  type GateResult,
  listRegressions,
  readDefinition,
  type RegressionDefinition,
  type RegressionView,
  type SavedRegression,
  saveRegression,
} from "../ledger/regressions.ts";
import { headView, reverifiedHead } from "../ledger/head.ts";
import {
  recurrenceSentence,
  type ReplayRecurrence,
  replayRecurrence,
} from "../ledger/recurrence.ts";
import { listRuns, readRun, validateRunId } from "../ledger/runs.ts";
import { hasLedger, requireLedger } from "../ledger/schema.ts";
import { readRunCheckpoint, unrecordedRuns } from "./kept_report.ts";
import {
  readTarget,
  type TargetRecord,
  validateTargetId,
} from "../ledger/targets.ts";
import type { Checkpoint } from "../runner/checkpoint.ts";
import type { RunReport } from "../runner/report.ts";
import {
  latestUnfinishedReplays,
  type ListedRegression,
  newestUnfinishedReplays,
  type UnfinishedReplay,
  withLatestUnfinished,
  withUnfinishedReplays,
} from "./unfinished_replays.ts";

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
    const checkpoint = await readRunCheckpoint(options.dataDir, runId);
    if (!checkpoint) throw error;
    if (checkpoint.state === "completed") {
      // A regression is pinned to a ledger report: a file vouches for nothing.
      throw new RefusedError(
        `Cannot save run ${runId} as a regression: it completed, but the ledger does not hold its report (see trace external-show ${runId}); only a FAIL in the ledger can be saved: run it again and save that run`,
      );
    }
    throw new RefusedError(
      `Cannot save run ${runId} as a regression: it never completed (only a checkpoint exists, so it is running or interrupted); only a completed FAIL can be saved`,
    );
  }
}

/** Options for {@link regressionsOf} and {@link listSavedRegressions}. */
export interface RegressionListOptions {
  /**
   * The data directory whose checkpoints show replays that never finished:
   * each regression gets the one the gate judges it by, if any. Without
   * it, `unfinished_replay` is always `null`.
   */
  dataDir?: string | undefined;
  /** Appended to each command a reason names (the CLI's `--data-dir`/`--db`). */
  commandFlags?: string;
  /** Liveness of a checkpoint's writer (tests); the same process on this host by default. */
  isAlive?: (pid: number) => boolean;
}

/** Saved regressions, optionally of one target, which must be registered. */
export async function regressionsOf(
  db: TraceDb,
  targetId?: string,
  options: RegressionListOptions = {},
): Promise<ListedRegression[]> {
  const target = await targetFilter(db, targetId);
  return (await readRegressions(db, target, options)).listed;
}

/** What a page shows of saved regressions: the listing and the gate over it. */
export interface RegressionsView {
  regressions: ListedRegression[];
  gate: GateResult;
  /**
   * By regression id, what its latest recorded replay showed of the saved
   * failure, for each whose latest recorded replay did not pass.
   */
  latest_recurrence: Record<string, ReplayRecurrence>;
}

/**
 * The listing of {@link regressionsOf} and the gate of {@link gate} as a
 * page judges it (refusing nothing over a completed run the ledger lacks),
 * from one read of the regressions, of `dataDir`'s checkpoints and of each
 * latest replay's report, judging each recurrence once.
 */
export async function regressionsView(
  db: TraceDb,
  options: Pick<RegressionListOptions, "dataDir" | "isAlive"> = {},
): Promise<RegressionsView> {
  await targetFilter(db, undefined);
  const head = headView(await reverifiedHead(db));
  const { regressions, latest, listed, recurrences } = await readRegressions(
    db,
    undefined,
    { ...options, reports: "not_passed" },
  );
  return {
    regressions: listed,
    gate: withUnfinishedReplays(
      gateRegressions(regressions, null, head, {
        latestRecurrences: recurrences,
      }),
      { regressions, latest },
    ),
    latest_recurrence: recurrences,
  };
}

/** What a target's page shows of its regressions. */
export type TargetRegressionsView = Omit<RegressionsView, "gate">;

/** Options for {@link targetRegressionsView}. */
export interface TargetRegressionsOptions
  extends Pick<RegressionListOptions, "dataDir" | "isAlive"> {
  /** Reports the page has already read (its recent runs): not read again. */
  knownReports?: readonly RunReport[];
}

/**
 * The listing of {@link regressionsOf} for one registered target (its
 * record, as the caller read it) with what each latest recorded replay that
 * did not pass showed of its saved failure (a target's page lists its
 * regressions as the regressions page does), reading each latest replay's
 * report at most once.
 */
export async function targetRegressionsView(
  db: TraceDb,
  target: TargetRecord,
  options: TargetRegressionsOptions = {},
): Promise<TargetRegressionsView> {
  const { knownReports, ...rest } = options;
  const read = await readRegressions(db, target.target_id, {
    ...rest,
    reports: "not_passed",
    known: byRunId(knownReports ?? []),
  });
  return { regressions: read.listed, latest_recurrence: read.recurrences };
}

/** One read of saved regressions, as every listing and the gate use it. */
interface RegressionsRead {
  regressions: RegressionView[];
  /** By regression id, its latest replay when that one never finished. */
  latest: Map<string, UnfinishedReplay>;
  /** The latest recorded replays' reports read up front, by run id. */
  reports: Map<string, RunReport>;
  /** `regressions` as a listing shows them, each with that replay. */
  listed: ListedRegression[];
  /**
   * By regression id, what its latest recorded replay showed of the saved
   * failure, for each whose latest recorded replay did not pass (none
   * unless asked for).
   */
  recurrences: Record<string, ReplayRecurrence>;
}

/** Options for {@link readRegressions}. */
interface RegressionsReadOptions
  extends Pick<RegressionListOptions, "dataDir" | "isAlive"> {
  /**
   * Which latest recorded replays' reports are read up front: those that
   * did not pass (only they say something of their saved failure, which
   * is judged), or all (the gate re-judges each). Otherwise a report is
   * read only to place a replay that never finished.
   */
  reports?: "not_passed" | "all";
  /** The regressions whose replays are read (all by default); the others are returned without. */
  only?: (regression: RegressionView) => boolean;
  /** The checkpoints of runs that never completed, as the caller read them from `dataDir`: not read again. */
  unfinished?: readonly Checkpoint[];
  /** Latest replay reports already read, by run id: not read again. */
  known?: ReadonlyMap<string, RunReport>;
}

/**
 * The regressions of `target` (all when `undefined`; checked by the
 * caller), each with its latest replay when that one never finished.
 */
async function readRegressions(
  db: TraceDb,
  target: string | undefined,
  options: RegressionsReadOptions,
): Promise<RegressionsRead> {
  const regressions = await listRegressions(db, target);
  const replayed = options.only
    ? regressions.filter(options.only)
    : regressions;
  const known = options.known ?? new Map();
  const reports = options.reports === undefined
    ? new Map<string, RunReport>()
    : await latestReplayReports(
      db,
      options.reports === "all"
        ? replayed
        : replayed.filter((r) => r.last_result !== "PASS"),
      known,
    );
  const latest = await latestUnfinishedReplays(
    db,
    replayed,
    newestUnfinishedReplays(
      await unfinishedRuns(db, target, options),
      options.isAlive,
    ),
    new Map([...known, ...reports]),
  );
  return {
    regressions,
    latest,
    reports,
    listed: withLatestUnfinished(regressions, latest),
    recurrences: latestRecurrences(regressions, reports),
  };
}

/**
 * The checkpoints of `target`'s runs that never completed, as the caller
 * read them or as `dataDir` holds them (none without it).
 */
async function unfinishedRuns(
  db: TraceDb,
  target: string | undefined,
  options: Pick<RegressionsReadOptions, "dataDir" | "unfinished">,
): Promise<readonly Checkpoint[]> {
  if (options.unfinished) return options.unfinished;
  // A listing shows what the readable checkpoints say; refusing over a
  // completed run the ledger lacks is the gate's business, not a listing's.
  return options.dataDir === undefined
    ? []
    : (await unrecordedRuns(db, options.dataDir, target)).unfinished;
}

/**
 * The reports of the latest recorded replays, by run id: what the gate
 * re-judges, and reads to say whether the saved failure came back. Those
 * among `known` are taken as they are, not read again.
 */
async function latestReplayReports(
  db: TraceDb,
  regressions: readonly RegressionView[],
  known: ReadonlyMap<string, RunReport> = new Map(),
): Promise<Map<string, RunReport>> {
  const reports = new Map<string, RunReport>();
  for (const { last_run_id: runId } of regressions) {
    if (runId === null) continue;
    const report = known.get(runId) ?? await readRun(db, runId);
    if (report !== null) reports.set(runId, report);
  }
  return reports;
}

function byRunId(reports: readonly RunReport[]): Map<string, RunReport> {
  return new Map(reports.map((report) => [report.run_id, report]));
}

function latestRecurrences(
  regressions: readonly RegressionView[],
  reports: ReadonlyMap<string, RunReport>,
): Record<string, ReplayRecurrence> {
  const recurrences: Record<string, ReplayRecurrence> = {};
  for (const regression of regressions) {
    if (regression.last_result === "PASS") continue;
    const report = reports.get(regression.last_run_id ?? "");
    const recurrence = report
      ? replayRecurrence(regression.definition, report)
      : null;
    if (recurrence) recurrences[regression.regression_id] = recurrence;
  }
  return recurrences;
}

/** What a replay that did not pass showed of the failure its regression was saved for. */
export interface ReplayRecurrenceView {
  /** Whether the saved failure came back, it failed on something else, or it cannot say. */
  recurrence: ReplayRecurrence;
  /** The same in words, as the run page says it (no final period). */
  sentence: string;
  /** The run the regression was saved from, to compare the replay with. */
  source_run_id: string;
}

/**
 * What `report`, a replay of `regressionId`, showed of the failure the
 * regression was saved for; `null` for a PASS or a regression the ledger
 * lacks.
 */
export async function replayRecurrenceView(
  db: TraceDb,
  regressionId: string,
  report: RunReport,
): Promise<ReplayRecurrenceView | null> {
  // A PASS shows nothing of the saved failure: no definition to read.
  if (report.verdict === "PASS") return null;
  const definition = await readDefinition(db, regressionId);
  return definition && recurrenceViewOf(definition, report);
}

/** {@link replayRecurrenceView} of a definition already read; `null` for a PASS. */
export function recurrenceViewOf(
  definition: RegressionDefinition,
  report: RunReport,
): ReplayRecurrenceView | null {
  const recurrence = replayRecurrence(definition, report);
  return recurrence && {
    recurrence,
    sentence: recurrenceSentence(recurrence, definition),
    source_run_id: definition.source_run_id,
  };
}

/** Saved regressions as a listing shows them: none in a database never written to. */
export async function listSavedRegressions(
  db: TraceDb,
  targetId?: string,
  options: RegressionListOptions = {},
): Promise<ListedRegression[]> {
  if (targetId === undefined && !await hasLedger(db)) return [];
  return await regressionsOf(db, targetId, options);
}

/** Options for {@link gate}. */
export interface GateOptions {
  /**
   * Refuse a ledger without a single external run, whose gate would pass
   * vacuously (the CI gate; a page may show "no enforced regression" instead).
   */
  requireRuns?: boolean;
  /**
   * The data directory whose checkpoints show what ran: a completed run the
   * ledger does not hold makes the gate refuse (it would judge less than
   * what ran), and a replay that never finished, started after its
   * regression's latest recorded replay, is that regression's latest.
   */
  dataDir?: string;
  /**
   * With `dataDir`: refuse when a completed run or an unreadable checkpoint
   * is missing from the ledger (the CI gate, the default); `false` judges
   * what the ledger and the readable checkpoints show (a page, which names
   * such runs elsewhere).
   */
  refuseUnrecorded?: boolean;
  /** Appended to each command a reason names (the CLI's `--data-dir`/`--db`). */
  commandFlags?: string;
  /** Liveness of a checkpoint's writer (tests); the same process on this host by default. */
  isAlive?: (pid: number) => boolean;
}

/**
 * The gate over enforced regressions, optionally of one registered target,
 * with the verified ledger head it judged (for CI logs to keep). A broken
 * ledger throws: a gate never passes on evidence it cannot trust.
 */
export async function gate(
  db: TraceDb,
  targetId?: string,
  options: GateOptions = {},
): Promise<GateResult> {
  const target = await targetFilter(db, targetId);
  // A judgement re-walks what a cached verification might have missed first.
  const head = headView(await reverifiedHead(db));
  if (options.requireRuns) await requireSomeRun(db, target);
  const unfinished = options.dataDir === undefined ? [] : await requireRecorded(
    db,
    options.dataDir,
    target,
    options.refuseUnrecorded ?? true,
  );
  const { regressions, reports, latest, recurrences } = await readRegressions(
    db,
    target,
    {
      // Only an enforced regression is judged: no other replay is read.
      only: (r) => r.status === "enforced",
      reports: "all",
      unfinished,
      ...(options.isAlive ? { isAlive: options.isAlive } : {}),
    },
  );
  judgeLatestReplays(regressions, reports);
  return withUnfinishedReplays(
    gateRegressions(regressions, target ?? null, head, {
      latestRecurrences: recurrences,
    }),
    { regressions, latest, commandFlags: options.commandFlags },
  );
}

/**
 * Re-judges the latest replay of each enforced regression from its report's
 * findings (reading the report does), and checks its replay record says the
 * same: a verdict rewritten with every digest recomputed passes the chain,
 * not this, and the gate must not pass on it.
 */
function judgeLatestReplays(
  regressions: readonly RegressionView[],
  reports: ReadonlyMap<string, RunReport>,
): void {
  for (const regression of regressions) {
    const { last_run_id: runId, last_result: recorded } = regression;
    if (regression.status !== "enforced" || runId === null) continue;
    const report = reports.get(runId);
    if (report === undefined || report.verdict === recorded) continue;
    throw new LedgerIntegrityError(
      `Run ${runId} (replay of ${regression.regression_id}) is inconsistent: its replay record says ${recorded} but its report and findings say ${report.verdict}, so an entry was rewritten; check the ledger against a head kept elsewhere with trace ledger verify --expect-head HEAD`,
    );
  }
}

/**
 * A ledger without a single external run (a fresh or mistyped data
 * directory, or one with only registrations), or a target never run, gives
 * the gate nothing to judge: it refuses rather than pass vacuously.
 */
async function requireSomeRun(
  db: TraceDb,
  targetId: string | undefined,
): Promise<void> {
  const runs = await listRuns(db, "external", {
    limit: 1,
    ...(targetId === undefined ? {} : { targetId }),
  });
  if (runs.length > 0) return;
  if (targetId !== undefined) {
    throw new RefusedError(
      `Target ${targetId} has no run in the ledger at ${
        dbLocation(db)
      } yet, so the gate has nothing to judge for it; run trace external-run --target ${targetId} first`,
    );
  }
  throw new StorageError(
    `No external runs in the ledger at ${
      dbLocation(db)
    } yet (reference runs are not gated), so the gate has nothing to judge; run trace external-run first (check --data-dir / --db if runs were recorded elsewhere)`,
  );
}

/**
 * Refuses while a completed run of the judged target(s) is missing from the
 * ledger; returns the checkpoints of those that never completed.
 */
async function requireRecorded(
  db: TraceDb,
  dataDir: string,
  targetId: string | undefined,
  refuse: boolean,
): Promise<Checkpoint[]> {
  const { runs: missing, unfinished, unreadable } = await unrecordedRuns(
    db,
    dataDir,
    targetId,
  );
  if (!refuse) return unfinished;
  if (unreadable.length > 0) {
    throw new RefusedError(
      `Checkpoint ${
        unreadable[0]
      } cannot be read, so the gate cannot tell whether its run completed: see trace external-show on that run id, then restore or remove the file`,
    );
  }
  if (missing.length === 0) return unfinished;
  const first = missing[0]!;
  const more = missing.length > 1 ? ` and ${missing.length - 1} more` : "";
  throw new RefusedError(
    `The ledger lacks completed run ${first.run_id}${more} (its checkpoint says ${
      first.verdict ?? "completed"
    }${
      first.kept ? "; a report was kept on disk" : ""
    }), so the gate cannot judge every run: see trace external-show ${first.run_id} and trace ledger verify; once you know why, move its files out of ${dataDir}/external`,
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
