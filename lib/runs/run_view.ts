/**
 * What `external-show` knows about a run id: the completed ledger report, or
 * else its checkpoint. A checkpoint without a completed ledger row is
 * `running` (verdict RUNNING) only while its process is still alive on this
 * host; otherwise it is `interrupted` and INCONCLUSIVE, never PASS. A view
 * also says which regression a saved FAIL became and what the latest
 * after-the-fact cleanup (`external-cleanup`) found. Its note sends the
 * reader to `external-cleanup` only for a run whose target is registered:
 * that command reaches the adapter through the registration, so for a
 * config run never registered (trace quickstart's) it says instead what
 * became of the records, and for a run whose later cleanup found the
 * application still serving its text, that the application needs fixing
 * first: another cleanup cannot change what it serves.
 *
 * @module
 */

import type { TraceDb } from "../db.ts";
import { NotFoundError } from "../errors.ts";
import type { Checkpoint } from "../runner/checkpoint.ts";
import { whatToCheck } from "../runner/finding_checks.ts";
import { processIdentity } from "../runner/process_identity.ts";
import type {
  RunReport,
  RunState,
  TargetRef,
  Verdict,
} from "../runner/report.ts";
import {
  type CleanupRecord,
  cleanupsOf,
  type LaterCleanup,
  laterCleanupOf,
  markersQueried,
  stillServed,
} from "../ledger/cleanups.ts";
import { replayOfRun, savedRegressionOf } from "../ledger/regressions.ts";
import { readRun, validateRunId } from "../ledger/runs.ts";
import { hasLedger } from "../ledger/schema.ts";
import { readTarget } from "../ledger/targets.ts";
import { systemOfTarget } from "../reference/systems.ts";
import {
  keptNote,
  lostNote,
  readKeptReport,
  readRunCheckpoint,
} from "./kept_report.ts";

/** The answer of `external-show`. */
export interface RunView {
  /** Format identifier. */
  schema: "trace.run-view/1";
  /** The run. */
  run_id: string;
  /** Completed, running, or interrupted (a checkpoint whose writer is gone). */
  state: RunState;
  /** The verdict; RUNNING while running, INCONCLUSIVE for interrupted runs. */
  verdict: Verdict | "RUNNING";
  /** The target the run was aimed at. */
  target: TargetRef;
  /**
   * Whether the target is registered (`false`: a config run never
   * registered, such as trace quickstart's, which `external-cleanup`
   * cannot reach); `null` for a reference run, a running one, or where
   * there is no ledger to ask.
   */
  target_registered: boolean | null;
  /** Digest of the config it ran with. */
  config_digest: string;
  /** When it started (ISO 8601). */
  started_at: string;
  /**
   * The regression this run replayed, if any: the ledger's link, or, for a
   * run only a checkpoint knows, the one its checkpoint names.
   */
  regression_id: string | null;
  /** The regression this (FAIL) run was saved as, if any. */
  saved_as: string | null;
  /**
   * The latest `external-cleanup` of this run, if any, with the `status`
   * that command gave. With `markers_queried` (the run kept its markers)
   * its `cleanup_complete` means what the run's own does: every store of
   * both namespaces read 0 and neither marker was retrievable; without,
   * only that every deletion was acknowledged and both inventories read 0
   * (retrieval was not checked).
   */
  cleanup: LaterCleanup | null;
  /** The completed report; `null` for running and interrupted runs, and for a completed run whose report is lost. */
  report: RunReport | null;
  /** For runs without a completed report: what the checkpoint recorded. */
  checkpoint: {
    pid: number;
    updated_at: string;
    namespaces: { test: string; control: string };
    issued: { test: string[]; control: string[] };
  } | null;
  /** What the state means and what to do next, in words. */
  note: string | null;
  /**
   * A FAIL's or an INCONCLUSIVE report's "What to check", one sentence
   * each: the place in the application its evidence points at first.
   * Empty for a PASS, a reference run (its outcome is known) and a run
   * without a completed report.
   */
  what_to_check: string[];
  /**
   * Where the run's record is: the ledger (verified), a report kept in a
   * file when the ledger could not take it, or only its checkpoint.
   */
  kept_in: "ledger" | "file" | "checkpoint";
}

/** Options for {@link viewRun}. */
export interface ViewRunOptions {
  /** The data directory whose checkpoints are consulted. */
  dataDir: string;
  /** Liveness check for a checkpoint's pid (injectable for tests). */
  isAlive?: (pid: number) => boolean;
  /** Whether the database has a ledger (default: checked); without one only checkpoints are consulted. */
  ledger?: boolean;
}

/** Where a run id was found, and what that says about the run. */
export type LocatedRun =
  | { found: "ledger"; report: RunReport; regressionId: string | null }
  | { found: "kept"; report: RunReport; path: string }
  | { found: "checkpoint"; checkpoint: Checkpoint; running: boolean };

/**
 * Looks up a run in the ledger, then among checkpoints (and the reports kept
 * beside them). A checkpoint is `running` only while the process that wrote
 * it is alive.
 */
export async function locateRun(
  db: TraceDb,
  runId: string,
  options: ViewRunOptions,
): Promise<LocatedRun> {
  validateRunId(runId);
  const ledger = options.ledger ?? await hasLedger(db);
  const report = ledger ? await readRun(db, runId) : null;
  if (report) {
    const replay = await replayOfRun(db, runId);
    return {
      found: "ledger",
      report,
      regressionId: replay?.regression_id ?? null,
    };
  }
  const checkpoint = await readRunCheckpoint(options.dataDir, runId);
  if (!checkpoint) {
    throw new NotFoundError(
      `Cannot find run ${runId} in the ledger or among checkpoints in ${options.dataDir}; check --data-dir`,
    );
  }
  const kept = checkpoint.state === "completed"
    ? await readKeptReport(options.dataDir, checkpoint)
    : null;
  if (kept) return { found: "kept", ...kept };
  const isAlive = options.isAlive ??
    ((pid: number) => isSameProcess(pid, checkpoint.process_identity));
  return {
    found: "checkpoint",
    checkpoint,
    running: checkpoint.state === "running" && isAlive(checkpoint.pid),
  };
}

/** Looks up a run in the ledger, then among checkpoints. */
export async function viewRun(
  db: TraceDb,
  runId: string,
  options: ViewRunOptions,
): Promise<RunView> {
  const located = await locateRun(db, runId, options);
  const ledger = located.found !== "checkpoint" || !located.running
    ? options.ledger ?? await hasLedger(db)
    : false;
  const target = located.found === "checkpoint"
    ? located.checkpoint.target.id
    : located.report.target.id;
  const cleanup = ledger
    ? (await cleanupsOf(db, runId, target)).at(-1) ?? null
    : null;
  const reference = located.found !== "checkpoint" &&
    located.report.kind === "reference";
  // external-cleanup reaches a run's adapter through its registered target only.
  const registered = ledger && !reference
    ? (await readTarget(db, target)) !== null
    : null;
  switch (located.found) {
    case "ledger":
      return ledgerView(
        located.report,
        located.regressionId,
        await savedRegressionOf(db, located.report.run_id),
        cleanup,
        registered,
      );
    case "kept":
      return keptView(located.report, located.path, cleanup, registered);
    case "checkpoint":
      return checkpointView(
        located.checkpoint,
        located.running,
        cleanup,
        registered,
      );
  }
}

/** A later cleanup as views show it. */
function cleanupOf(record: CleanupRecord | null): RunView["cleanup"] {
  return record ? laterCleanupOf(record) : null;
}

/**
 * What to do when a later cleanup found the application still serving the
 * run's text after deleting it, or `null` when it did not: running
 * `external-cleanup` again only confirms a fix, it cannot make one.
 */
export function stillServedAdvice(
  runId: string,
  later: Pick<LaterCleanup, "cleanup_id" | "marker_seen"> | null,
): string | null {
  if (later === null || !stillServed(later)) return null;
  return `cleanup ${later.cleanup_id} found the application still serving this run's text after deleting it: fix the application's delete path (or remove the records with the application's own tools), then run trace external-cleanup ${runId} again to confirm`;
}

/** What a complete later cleanup found, after "deleted …": all it could check. */
function laterCleanFinding(record: CleanupRecord): string {
  return markersQueried(record)
    ? "every store of both namespaces read 0 and neither marker was retrievable"
    : "both inventories read 0 (retrieval was not checked: its markers were not kept)";
}

function ledgerView(
  report: RunReport,
  regressionId: string | null,
  saved: string | null,
  cleanup: CleanupRecord | null,
  registered: boolean | null,
): RunView {
  return reportView(report, {
    regressionId,
    savedAs: saved,
    cleanup,
    targetRegistered: registered,
    note: report.kind === "reference"
      ? `a reference run of system ${
        systemOfTarget(report.target.id) ?? report.target.id
      }; see trace reference show ${report.run_id}`
      : leftoverNote(report, cleanup, registered),
  });
}

/** What {@link reportView} adds to a completed report; each `null` by default. */
export interface ReportViewLinks {
  /** The regression the run replayed. */
  regressionId?: string | null;
  /** The regression the run was saved as. */
  savedAs?: string | null;
  /** The latest `external-cleanup` of the run. */
  cleanup?: CleanupRecord | null;
  /** What the run's state means and what to do next. */
  note?: string | null;
  /** Where the report is (default: the ledger). */
  keptIn?: "ledger" | "file";
  /** Whether the run's target is registered (default `null`: not asked). */
  targetRegistered?: boolean | null;
}

/** The view of a completed report, with what the ledger links to it. */
export function reportView(
  report: RunReport,
  links: ReportViewLinks = {},
): RunView {
  return {
    schema: "trace.run-view/1",
    run_id: report.run_id,
    state: report.state,
    verdict: report.verdict,
    target: report.target,
    target_registered: links.targetRegistered ?? null,
    config_digest: report.config_digest,
    started_at: report.started_at,
    regression_id: links.regressionId ?? null,
    saved_as: links.savedAs ?? null,
    cleanup: cleanupOf(links.cleanup ?? null),
    report,
    checkpoint: null,
    note: links.note ?? null,
    what_to_check: whatToCheck(report),
    kept_in: links.keptIn ?? "ledger",
  };
}

/** What to do about records a completed run may have left. */
function leftoverNote(
  report: RunReport,
  cleanup: CleanupRecord | null,
  registered: boolean | null,
): string | null {
  if (report.cleanup.cleanup_complete) return null;
  if (cleanup?.outcome.cleanup_complete) {
    return `its cleanup was incomplete; cleanup ${cleanup.cleanup_id} deleted every id it issued on ${cleanup.finished_at} and ${
      laterCleanFinding(cleanup)
    }`;
  }
  if (registered === false) {
    return `its cleanup was incomplete, and ${
      notCleanable(report.target.id, report.namespaces)
    }`;
  }
  const served = stillServedAdvice(report.run_id, cleanupOf(cleanup));
  if (served !== null) return `its cleanup was incomplete, and ${served}`;
  return `its cleanup was incomplete: remove what is left with trace external-cleanup ${report.run_id}`;
}

/**
 * Why `external-cleanup` cannot remove what a run of an unregistered target
 * left, and what became of it. Trace's own commands leave such runs only
 * from trace quickstart, whose demo app kept every record in the memory of
 * that command's process (it writes nothing to disk), so they ended with it.
 */
export function notCleanable(
  targetId: string,
  namespaces: { test: string; control: string },
): string {
  return `trace external-cleanup cannot remove them, as target ${targetId} was never registered and its adapter is unknown: a trace quickstart run used its in-process demo app, which kept the records in memory, so they ended with that command and nothing is left to remove; for an adapter that still runs, delete namespaces ${namespaces.test} and ${namespaces.control} with the application's own tools`;
}

function keptView(
  report: RunReport,
  path: string,
  cleanup: CleanupRecord | null,
  registered: boolean | null,
): RunView {
  return reportView(report, {
    cleanup,
    note: keptNote(path),
    keptIn: "file",
    targetRegistered: registered,
  });
}

/** Alive and the same process that wrote the checkpoint (not a later one that reused its pid). */
export function isSameProcess(pid: number, identity: string | null): boolean {
  if (!isProcessAlive(pid)) return false;
  return identity === null || processIdentity(pid) === identity;
}

function checkpointView(
  checkpoint: Checkpoint,
  running: boolean,
  cleanup: CleanupRecord | null,
  registered: boolean | null,
): RunView {
  const lost = checkpoint.state === "completed";
  return {
    schema: "trace.run-view/1",
    run_id: checkpoint.run_id,
    state: lost ? "completed" : running ? "running" : "interrupted",
    verdict: lost
      ? checkpoint.verdict ?? "INCONCLUSIVE"
      : running
      ? "RUNNING"
      : "INCONCLUSIVE",
    target: checkpoint.target,
    target_registered: running ? null : registered,
    config_digest: checkpoint.config_digest,
    started_at: checkpoint.started_at,
    regression_id: checkpoint.regression_id,
    saved_as: null,
    cleanup: cleanupOf(cleanup),
    report: null,
    checkpoint: {
      pid: checkpoint.pid,
      updated_at: checkpoint.updated_at,
      namespaces: checkpoint.namespaces,
      issued: checkpoint.issued,
    },
    note: lost
      ? lostNote(checkpoint.run_id, checkpoint.verdict)
      : running
      ? `process ${checkpoint.pid} is still running this run; show it again when it finishes`
      : interruptedNote(checkpoint, cleanup, registered),
    what_to_check: [],
    kept_in: "checkpoint",
  };
}

function interruptedNote(
  checkpoint: Checkpoint,
  cleanup: CleanupRecord | null,
  registered: boolean | null,
): string {
  const issued = checkpoint.issued.test.length +
    checkpoint.issued.control.length;
  const stopped =
    `the run stopped before a completed report reached the ledger; ${issued} synthetic id(s) were issued`;
  if (cleanup?.outcome.cleanup_complete) {
    return `${stopped}; cleanup ${cleanup.cleanup_id} deleted them on ${cleanup.finished_at} and ${
      laterCleanFinding(cleanup)
    }`;
  }
  if (registered === false) {
    return `${stopped}; ${
      notCleanable(checkpoint.target.id, checkpoint.namespaces)
    }`;
  }
  const served = stillServedAdvice(checkpoint.run_id, cleanupOf(cleanup));
  if (served !== null) return `${stopped}; ${served}`;
  return `${stopped} and may remain in namespaces ${checkpoint.namespaces.test} and ${checkpoint.namespaces.control}; remove them with trace external-cleanup ${checkpoint.run_id}`;
}

/** True when `pid` is a live (non-zombie) process on this host; always false where that cannot be checked. */
export function isProcessAlive(pid: number): boolean {
  if (Deno.build.os !== "linux" || !Number.isInteger(pid) || pid <= 0) {
    return false;
  }
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    // The state letter follows the parenthesised command name.
    const state = stat.slice(
      stat.lastIndexOf(")") + 2,
      stat.lastIndexOf(")") + 3,
    );
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}
