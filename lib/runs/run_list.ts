/**
 * `external-runs`: every run this data directory knows, newest first. The
 * ledger holds completed external and reference runs (each row checked
 * against the verified chain); checkpoints add runs that are still running
 * or were interrupted, and reports kept beside them when the ledger could
 * not take one.
 *
 * @module
 */

import { join } from "node:path";
import type { TraceDb } from "../db.ts";
import { latestCleanups } from "../ledger/cleanups.ts";
import { listRegressions, listReplays } from "../ledger/regressions.ts";
import { findRuns, recordedRunIds, type StoredRun } from "../ledger/runs.ts";
import { listTargets } from "../ledger/targets.ts";
import {
  type Checkpoint,
  checkpointDir,
  readCheckpoint,
} from "../runner/checkpoint.ts";
import type { RunReport, RunState, Verdict } from "../runner/report.ts";
import { RefusedError } from "../errors.ts";
import { keptReportPath } from "./external_run.ts";
import { readKeptReport, runCheckpointIds } from "./kept_report.ts";
import { isSameProcess } from "./run_view.ts";

/** One run in the list. */
export interface RunListItem {
  run_id: string;
  kind: RunReport["kind"];
  target_id: string;
  /**
   * Whether the target is registered (`false`: a config run never
   * registered, such as quickstart's, which cannot be run again, saved,
   * replayed or cleaned up); `null` for a reference run.
   */
  target_registered: boolean | null;
  verdict: Verdict | "RUNNING";
  state: RunState;
  started_at: string;
  /** Where its record is: the ledger, a kept report file, or only a checkpoint. */
  kept_in: "ledger" | "file" | "checkpoint";
  /** The regression this run replayed. */
  regression_id: string | null;
  /** The regression this FAIL was saved as. */
  saved_as: string | null;
  /**
   * Synthetic records: `complete` (cleaned up), `incomplete` (some may
   * remain: trace external-cleanup), `cleaned` (by a later cleanup, also
   * of an interrupted run), `unknown` (running, or interrupted without a
   * cleanup since) or `none` (a reference run: nothing outside memory).
   */
  cleanup: "complete" | "incomplete" | "cleaned" | "unknown" | "none";
}

/** The answer of `external-runs`. */
export interface RunList {
  schema: "trace.run-list/1";
  runs: RunListItem[];
  /** Checkpoints that could not be read (their runs skipped), and kept reports that cannot be trusted (their runs listed as their checkpoints have them). */
  unreadable: string[];
}

/** Filters of {@link listAllRuns}. */
export interface RunListOptions {
  /** The data directory whose checkpoints are consulted. */
  dataDir: string;
  targetId?: string;
  verdict?: Verdict | "RUNNING";
  kind?: RunReport["kind"];
  state?: RunState;
  /** At most this many, newest first (default 50). */
  limit?: number;
  /** Whether the database has a ledger (default: it has). */
  ledger?: boolean;
  /** Liveness of a checkpoint's writer (tests). */
  isAlive?: (pid: number) => boolean;
}

/** Runs of this data directory, newest first, filtered. */
export async function listAllRuns(
  db: TraceDb,
  options: RunListOptions,
): Promise<RunList> {
  const limit = options.limit ?? 50;
  const links = options.ledger === false ? null : await runLinks(db);
  const ledgerRuns = links === null
    ? []
    : await fromLedger(db, options, limit, links);
  // Every run the ledger holds, not only the listed ones: a completed
  // checkpoint of a run filtered out here is still not a lost run.
  const known = links === null ? new Set<string>() : await recordedRunIds(db);
  const { runs: local, unreadable } = await fromCheckpoints(
    options,
    known,
    links?.cleaned ?? new Map(),
  );
  const registered = links === null
    ? new Set<string>()
    : new Set((await listTargets(db)).map((t) => t.target_id));
  const runs = [...ledgerRuns, ...local.filter((run) => matches(run, options))]
    .sort((a, b) =>
      a.started_at < b.started_at ? 1 : a.started_at > b.started_at ? -1 : 0
    )
    .slice(0, limit)
    .map((run) => ({
      ...run,
      target_registered: run.kind === "reference"
        ? null
        : registered.has(run.target_id),
    }));
  return { schema: "trace.run-list/1", runs, unreadable };
}

function matches(run: RunListItem, options: RunListOptions): boolean {
  return (options.targetId === undefined ||
    run.target_id === options.targetId) &&
    (options.verdict === undefined || run.verdict === options.verdict) &&
    (options.kind === undefined || run.kind === options.kind) &&
    (options.state === undefined || run.state === options.state);
}

async function fromLedger(
  db: TraceDb,
  options: RunListOptions,
  limit: number,
  links: RunLinks,
): Promise<RunListItem[]> {
  if (options.state !== undefined && options.state !== "completed") return [];
  if (options.verdict === "RUNNING") return [];
  const stored = await findRuns(db, {
    limit,
    ...(options.kind === undefined ? {} : { kinds: [options.kind] }),
    ...(options.targetId === undefined ? {} : { targetId: options.targetId }),
    ...(options.verdict === undefined ? {} : { verdict: options.verdict }),
  });
  return stored.map((run) => ledgerItem(run, links));
}

interface RunLinks {
  replays: Map<string, string>;
  saved: Map<string, string>;
  /** Whether the latest `external-cleanup` of a run completed, by run id. */
  cleaned: Map<string, boolean>;
}

async function runLinks(db: TraceDb): Promise<RunLinks> {
  const regressions = await listRegressions(db);
  const replays = new Map(
    (await listReplays(db)).map((r) => [r.run_id, r.regression_id]),
  );
  const saved = new Map(
    regressions.map((r) => [r.source_run_id, r.regression_id]),
  );
  const cleaned = new Map(
    [...(await latestCleanups(db)).entries()].map((
      [runId, record],
    ) => [runId, record.outcome.cleanup_complete]),
  );
  return { replays, saved, cleaned };
}

function ledgerItem(stored: StoredRun, links: RunLinks): RunListItem {
  const { report } = stored;
  return reportItem(report, "ledger", {
    regressionId: links.replays.get(report.run_id) ?? null,
    savedAs: links.saved.get(report.run_id) ?? null,
    cleanedLater: links.cleaned.get(report.run_id),
  });
}

/** The list item of a completed report, with what the ledger links to it. */
function reportItem(
  report: RunReport,
  keptIn: "ledger" | "file",
  links: {
    regressionId: string | null;
    savedAs: string | null;
    cleanedLater: boolean | undefined;
  },
): RunListItem {
  return {
    run_id: report.run_id,
    kind: report.kind,
    target_id: report.target.id,
    target_registered: null,
    verdict: report.verdict,
    state: report.state,
    started_at: report.started_at,
    kept_in: keptIn,
    regression_id: links.regressionId,
    saved_as: links.savedAs,
    cleanup: cleanupState(report, links.cleanedLater),
  };
}

function cleanupState(
  report: RunReport,
  laterComplete: boolean | undefined,
): RunListItem["cleanup"] {
  if (report.kind === "reference") return "none";
  if (report.cleanup.cleanup_complete) return "complete";
  return laterComplete ? "cleaned" : "incomplete";
}

/** Runs that only a checkpoint (or a kept report beside it) knows. */
async function fromCheckpoints(
  options: RunListOptions,
  known: Set<string>,
  cleaned: Map<string, boolean>,
): Promise<{ runs: RunListItem[]; unreadable: string[] }> {
  const runs: RunListItem[] = [];
  const unreadable: string[] = [];
  const untrusted = (path: string) => void unreadable.push(path);
  for (const runId of await runCheckpointIds(options.dataDir)) {
    if (known.has(runId)) continue;
    try {
      const item = await checkpointItem(
        options,
        runId,
        cleaned.get(runId),
        untrusted,
      );
      if (item) runs.push(item);
    } catch {
      unreadable.push(join(checkpointDir(options.dataDir), `${runId}.json`));
    }
  }
  return { runs, unreadable };
}

async function checkpointItem(
  options: RunListOptions,
  runId: string,
  laterComplete: boolean | undefined,
  untrusted: (path: string) => void,
): Promise<RunListItem | null> {
  const checkpoint = await readCheckpoint(options.dataDir, runId);
  if (!checkpoint) return null;
  if (checkpoint.state === "completed") {
    return await unrecordedItem(options.dataDir, checkpoint, untrusted);
  }
  const isAlive = options.isAlive ??
    ((pid: number) => isSameProcess(pid, checkpoint.process_identity));
  const running = isAlive(checkpoint.pid);
  return {
    run_id: runId,
    kind: "external",
    target_id: checkpoint.target.id,
    target_registered: null,
    verdict: running ? "RUNNING" : "INCONCLUSIVE",
    state: running ? "running" : "interrupted",
    started_at: checkpoint.started_at,
    kept_in: "checkpoint",
    regression_id: null,
    saved_as: null,
    cleanup: running || laterComplete === undefined
      ? "unknown"
      : laterComplete
      ? "cleaned"
      : "incomplete",
  };
}

/**
 * A completed run the ledger does not have: its kept report (checked
 * against its checkpoint and its own evidence), else what its checkpoint
 * says (the report is lost, or untrusted: `external-show` says which).
 */
async function unrecordedItem(
  dataDir: string,
  checkpoint: Checkpoint,
  untrusted: (path: string) => void,
): Promise<RunListItem> {
  // A kept report that cannot be trusted is named; the run stays listed as its checkpoint has it.
  const kept = await readKeptReport(dataDir, checkpoint).catch((error) => {
    if (!(error instanceof RefusedError)) throw error;
    untrusted(keptReportPath(dataDir, checkpoint.run_id));
    return null;
  });
  if (kept) {
    return reportItem(kept.report, "file", {
      regressionId: null,
      savedAs: null,
      cleanedLater: undefined,
    });
  }
  return {
    run_id: checkpoint.run_id,
    kind: "external",
    target_id: checkpoint.target.id,
    target_registered: null,
    verdict: checkpoint.verdict ?? "INCONCLUSIVE",
    state: "completed",
    started_at: checkpoint.started_at,
    kept_in: "checkpoint",
    regression_id: null,
    saved_as: null,
    cleanup: "unknown",
  };
}
