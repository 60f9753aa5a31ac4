/**
 * Every run a data directory knows, as one list of summaries for pages:
 * completed external and reference runs from the ledger (each row verified
 * by the ledger's reader), and runs that only a checkpoint knows (RUNNING
 * while their writer is alive, otherwise interrupted, INCONCLUSIVE), a
 * report kept beside a checkpoint when the ledger could not take it, or a
 * checkpoint that says its run completed whose report neither has (lost:
 * its verdict is the checkpoint's alone).
 * Newest first by start time. `external-runs` (`run_list.ts`) lists these
 * runs for the terminal, filtered and linked to their regressions; pages
 * also use each run's duration and cursor paging over every run.
 *
 * @module
 */

import { join } from "node:path";
import type { TraceDb } from "../db.ts";
import {
  type CleanupRecord,
  latestCleanups,
  markersQueried,
} from "../ledger/cleanups.ts";
import { findRuns, recordedRunIds, type RunKind } from "../ledger/runs.ts";
import { hasLedger } from "../ledger/schema.ts";
import { NotFoundError, RefusedError } from "../errors.ts";
import { checkpointDir } from "../runner/checkpoint.ts";
import type { RunReport, RunState, Verdict } from "../runner/report.ts";
import { listTargets, type TargetRecord } from "../ledger/targets.ts";
import { keptReportPath } from "./external_run.ts";
import { readRunCheckpoint, runCheckpointIds } from "./kept_report.ts";
import { locateRun } from "./run_view.ts";

/** One run as lists show it. */
export interface RunSummary {
  run_id: string;
  kind: RunKind;
  target_id: string;
  /** RUNNING while it runs; INCONCLUSIVE for interrupted runs (never PASS before a final sample). */
  verdict: Verdict | "RUNNING";
  state: RunState;
  /**
   * Synthetic records after the run: `complete` (every store of both
   * namespaces read 0 and neither marker was retrievable, at the run's own
   * cleanup or a later one), `incomplete` (some may remain or still be
   * served: trace external-cleanup), `inventories_clear` (a later cleanup
   * of a run kept without its markers had every deletion acknowledged and
   * both inventories read 0; retrieval was not checked), `gone_with_demo`
   * (a run of trace quickstart's
   * unregistered in-process demo, whose records ended with that command),
   * `unknown` (running, or interrupted without a cleanup), `none` (a
   * reference run: nothing outside memory).
   */
  cleanup:
    | "complete"
    | "incomplete"
    | "inventories_clear"
    | "gone_with_demo"
    | "unknown"
    | "none";

  started_at: string;
  finished_at: string | null;
  /** Wall-clock seconds (virtual seconds for reference runs); `null` without a report. */
  duration_seconds: number | null;
  /** Where the record is: the ledger, a kept report file, or only a checkpoint. */
  kept_in: "ledger" | "file" | "checkpoint";
  /**
   * For a run only a checkpoint knows, the regression that checkpoint says
   * it replays (the ledger links the runs it holds).
   */
  checkpoint_replays?: string;
}

/** Options for {@link runCatalog}. */
export interface RunCatalogOptions {
  /** The data directory whose checkpoints are consulted; without it, the ledger only. */
  dataDir?: string | undefined;
  /** Only runs of this history. */
  kind?: RunKind | undefined;
  /** Only runs of this target. */
  targetId?: string | undefined;
  /** Only runs with this verdict. */
  verdict?: Verdict | "RUNNING" | undefined;
  /** Only runs in this state. */
  state?: RunState | undefined;
  /** At most this many newest runs from each source (default: all). */
  limit?: number | undefined;
  /** Liveness of a checkpoint's writer (tests). */
  isAlive?: ((pid: number) => boolean) | undefined;
  /** Whether the database has a ledger (default: asked). */
  ledger?: boolean | undefined;
  /** The registered targets, when the caller has read them (default: read). */
  registered?: readonly TargetRecord[] | undefined;
  /**
   * Told of each checkpoint that cannot be read (its run is skipped) and
   * each kept report that cannot be trusted (its run is listed as its
   * checkpoint has it).
   */
  onUnreadable?: ((path: string) => void) | undefined;
}

/** Largest list read when no limit is given: far beyond what one ledger holds in practice. */
const ALL = 1_000_000;

/** Summaries of the runs the ledger and the checkpoints know, newest first. */
export async function runCatalog(
  db: TraceDb,
  options: RunCatalogOptions = {},
): Promise<RunSummary[]> {
  return (await readRunCatalog(db, options)).runs;
}

/** The runs of {@link readRunCatalog} with the ledger reports they were read from. */
export interface RunCatalog {
  /** Summaries of the runs, newest first, as {@link runCatalog} gives them. */
  runs: RunSummary[];
  /**
   * The ledger's reports that matched, newest first in each history (at
   * most `limit` of each): a caller that also draws them reads them once.
   */
  reports: RunReport[];
}

/** {@link runCatalog} with the ledger reports it read. */
export async function readRunCatalog(
  db: TraceDb,
  options: RunCatalogOptions = {},
): Promise<RunCatalog> {
  const ledger = options.ledger ?? await hasLedger(db);
  const reports = ledger ? await fromLedger(db, options) : [];
  const stored = reports.map((report) => summarizeReport(report, "ledger"));
  const local = options.dataDir !== undefined && options.kind !== "reference"
    ? await fromCheckpoints(
      db,
      options.dataDir,
      stored,
      ledger ? await recordedRunIds(db) : new Set(),
      options,
    )
    : [];
  const cleaned = ledger ? await latestCleanups(db) : new Map();
  const registered = ledger
    ? new Set(
      (options.registered ?? await listTargets(db)).map((t) => t.target_id),
    )
    : null;
  const all = [...stored, ...local]
    .map((run) => withoutAdapter(withLaterCleanup(run, cleaned), registered))
    .sort(newestFirst);
  return {
    runs: options.limit === undefined ? all : all.slice(0, options.limit),
    reports,
  };
}

/** Orders summaries newest first by start time, then by run id. */
export function newestFirst(
  a: Pick<RunSummary, "started_at" | "run_id">,
  b: Pick<RunSummary, "started_at" | "run_id">,
): number {
  if (a.started_at !== b.started_at) {
    return a.started_at < b.started_at ? 1 : -1;
  }
  return a.run_id < b.run_id ? 1 : a.run_id > b.run_id ? -1 : 0;
}

/**
 * What a later `external-cleanup` says of a run's records: `complete` once
 * one found every store at 0 and neither marker retrievable, as the run's
 * own cleanup judges; `inventories_clear` once one that could not query the
 * markers (the run kept none) had every deletion acknowledged and both
 * inventories at 0, which is no verified clean. A run whose own cleanup is
 * unknown (interrupted, or its report lost) reads `incomplete` after one
 * that did not complete. A running run stays `unknown`.
 */
function withLaterCleanup(
  run: RunSummary,
  cleanups: ReadonlyMap<string, CleanupRecord>,
): RunSummary {
  const later = cleanups.get(run.run_id);
  if (!later || run.state === "running") return run;
  if (later.outcome.cleanup_complete) {
    return run.cleanup === "incomplete" || run.cleanup === "unknown"
      ? {
        ...run,
        cleanup: markersQueried(later) ? "complete" : "inventories_clear",
      }
      : run;
  }
  return run.cleanup === "unknown" ? { ...run, cleanup: "incomplete" } : run;
}

/**
 * A run of a target never registered (only trace quickstart's in-process
 * demo leaves such runs) cannot be cleaned by `external-cleanup`, and needs
 * not be: its records lived in that command's memory and ended with it.
 * `registered` is `null` without a ledger to ask.
 */
function withoutAdapter(
  run: RunSummary,
  registered: ReadonlySet<string> | null,
): RunSummary {
  if (
    registered === null || run.kind !== "external" ||
    run.state === "running" || registered.has(run.target_id)
  ) {
    return run;
  }
  return run.cleanup === "incomplete" || run.cleanup === "unknown"
    ? { ...run, cleanup: "gone_with_demo" }
    : run;
}

/** The summary of a finished report. */
export function summarizeReport(
  report: RunReport,
  keptIn: RunSummary["kept_in"],
): RunSummary {
  return {
    run_id: report.run_id,
    kind: report.kind,
    target_id: report.target.id,
    verdict: report.verdict,
    state: report.state,
    cleanup: report.kind === "reference"
      ? "none"
      : report.cleanup.cleanup_complete
      ? "complete"
      : "incomplete",
    started_at: report.started_at,
    finished_at: report.finished_at,
    duration_seconds: report.timing.elapsed_seconds,
    kept_in: keptIn,
  };
}

async function fromLedger(
  db: TraceDb,
  options: RunCatalogOptions,
): Promise<RunReport[]> {
  const kinds: RunKind[] = options.kind
    ? [options.kind]
    : ["external", "reference"];
  const lists = await Promise.all(kinds.map((kind) =>
    findRuns(db, {
      kinds: [kind],
      limit: options.limit ?? ALL,
      ...(options.targetId === undefined ? {} : { targetId: options.targetId }),
      ...(options.verdict === undefined ? {} : { verdict: options.verdict }),
      ...(options.state === undefined ? {} : { state: options.state }),
    })
  ));
  return lists.flat().map((run) => run.report);
}

/**
 * Runs only a checkpoint (or a report kept beside one) knows: every run the
 * ledger holds (`recorded`) is skipped, listed or not. When the
 * ledger already filled `limit`, checkpoints started before the oldest of
 * those runs cannot make the list and are not read (run ids begin with
 * their start time).
 */
async function fromCheckpoints(
  db: TraceDb,
  dataDir: string,
  stored: RunSummary[],
  recorded: ReadonlySet<string>,
  options: RunCatalogOptions,
): Promise<RunSummary[]> {
  const cutoff = limitCutoff(stored, options.limit);
  const summaries: RunSummary[] = [];
  for (const runId of await runCheckpointIds(dataDir)) {
    if (recorded.has(runId)) continue;
    const started = idTime(runId);
    if (cutoff !== null && started !== "" && started < cutoff) continue;
    const summary = await checkpointSummary(db, dataDir, runId, options);
    if (summary && matches(summary, options)) summaries.push(summary);
  }
  return summaries;
}

/** Whether `run` passes the target, verdict and state filters of `options`. */
function matches(run: RunSummary, options: RunCatalogOptions): boolean {
  return (options.targetId === undefined ||
    run.target_id === options.targetId) &&
    (options.verdict === undefined || run.verdict === options.verdict) &&
    (options.state === undefined || run.state === options.state);
}

async function checkpointSummary(
  db: TraceDb,
  dataDir: string,
  runId: string,
  options: RunCatalogOptions,
): Promise<RunSummary | null> {
  // An unreadable checkpoint is not a run to list; external-show names its
  // problem. A kept report that cannot be trusted leaves its run listed as
  // its checkpoint has it (its page names the problem).
  const unreadable = options.onUnreadable ?? (() => {});
  const located = await locateRun(db, runId, {
    dataDir,
    ledger: false,
    ...(options.isAlive ? { isAlive: options.isAlive } : {}),
  }).catch(async (error) => {
    // Gone since it was listed (removed by a cleanup): nothing to name.
    if (error instanceof NotFoundError) return null;
    const checkpoint = error instanceof RefusedError
      ? await readRunCheckpoint(dataDir, runId).catch(() => null)
      : null;
    if (!checkpoint) {
      unreadable(join(checkpointDir(dataDir), `${runId}.json`));
      return null;
    }
    unreadable(keptReportPath(dataDir, runId));
    return { found: "checkpoint" as const, checkpoint, running: false };
  });
  if (!located) return null;
  if (located.found !== "checkpoint") {
    return summarizeReport(located.report, "file");
  }
  const { checkpoint, running } = located;
  // Completed, yet neither the ledger nor a kept report has it: lost.
  const lost = checkpoint.state === "completed";
  return {
    run_id: runId,
    kind: "external",
    target_id: checkpoint.target.id,
    verdict: lost
      ? checkpoint.verdict ?? "INCONCLUSIVE"
      : running
      ? "RUNNING"
      : "INCONCLUSIVE",
    state: lost ? "completed" : running ? "running" : "interrupted",
    cleanup: "unknown",
    started_at: checkpoint.started_at,
    finished_at: null,
    duration_seconds: null,
    kept_in: "checkpoint",
    ...(checkpoint.regression_id === null
      ? {}
      : { checkpoint_replays: checkpoint.regression_id }),
  };
}

/**
 * The id time below which a checkpoint cannot be among the `limit` newest
 * runs: the start of the `limit`-th newest stored run, less a margin for
 * the moment between making a run id and starting the run.
 */
function limitCutoff(
  stored: RunSummary[],
  limit: number | undefined,
): string | null {
  if (limit === undefined || stored.length < limit) return null;
  const last = [...stored].sort(newestFirst)[limit - 1]!;
  const at = Date.parse(last.started_at) - 2000;
  return Number.isNaN(at) ? null : compactTime(new Date(at).toISOString());
}

/** `2026-11-30T18:13:29.817Z` as run ids spell it: `20261130T181329Z`. */
function compactTime(iso: string): string {
  return iso.replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z");
}

/** The start time a run id begins with (`20261130T181329Z`), or `""`. */
function idTime(runId: string): string {
  return /^run-(\d{8}T\d{6}Z)/.exec(runId)?.[1] ?? "";
}
