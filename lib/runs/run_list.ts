/**
 * `external-runs`: every run this data directory knows, newest first, as
 * the pages list them (`run_catalog.ts`: the ledger's completed runs, each
 * row checked against the verified chain, and the runs only a checkpoint
 * or a report kept beside one knows), filtered, and linked to the
 * regressions they replayed or were saved as.
 *
 * @module
 */

import type { TraceDb } from "../db.ts";
import { listRegressions, listReplays } from "../ledger/regressions.ts";
import { listUnregisteredTargets } from "../ledger/target_summaries.ts";
import { hasLedger } from "../ledger/schema.ts";
import { listTargets } from "../ledger/targets.ts";
import { NotFoundError } from "../errors.ts";
import { closestName } from "../suggest.ts";
import type { RunReport, RunState, Verdict } from "../runner/report.ts";
import { runCatalog, type RunSummary } from "./run_catalog.ts";

/** One run in the list. */
export interface RunListItem extends
  Pick<
    RunSummary,
    | "run_id"
    | "kind"
    | "target_id"
    | "verdict"
    | "state"
    | "started_at"
    | "kept_in"
    | "cleanup"
  > {
  /**
   * Whether the target is registered (`false`: a config run never
   * registered, such as quickstart's, which cannot be run again, saved,
   * replayed or cleaned up); `null` for a reference run.
   */
  target_registered: boolean | null;
  /**
   * The regression this run replayed (the ledger's link), or, for a run
   * only a checkpoint knows, the one its checkpoint says it replays.
   */
  regression_id: string | null;
  /** The regression this FAIL was saved as. */
  saved_as: string | null;
}

/** The answer of `external-runs`. */
export interface RunList {
  schema: "trace.run-list/1";
  /** The newest matching runs after the first `offset`, at most the limit. */
  runs: RunListItem[];
  /** How many runs match the filters, listed or not. */
  total: number;
  /** Whether older matching runs follow the ones listed (`offset` + `runs.length` < `total`): raise the limit, or page on, to see them. */
  truncated: boolean;
  /** Checkpoints that could not be read (their runs skipped), and kept reports that cannot be trusted (their runs listed as their checkpoints have them). */
  unreadable: string[];
}

/** How many runs {@link listAllRuns} lists without a limit. */
export const DEFAULT_RUN_LIMIT = 50;

/** Largest offset a run listing takes: far past any data directory's runs, small enough to stay exact. */
export const MAX_RUN_OFFSET = 1_000_000;

/** The values each filter of {@link listAllRuns} takes, for the CLI and MCP to check. */
export const RUN_LIST_FILTERS = {
  verdict: ["PASS", "FAIL", "INCONCLUSIVE", "RUNNING"],
  kind: ["external", "reference"],
  state: ["completed", "running", "interrupted"],
} as const;

/** Filters of {@link listAllRuns}. */
export interface RunListOptions {
  /** The data directory whose checkpoints are consulted. */
  dataDir: string;
  targetId?: string;
  verdict?: Verdict | "RUNNING";
  kind?: RunReport["kind"];
  state?: RunState;
  /** At most this many, newest first (default {@link DEFAULT_RUN_LIMIT}). */
  limit?: number;
  /** How many of the newest matching runs to skip first (default 0): the next page starts where the last ended. */
  offset?: number;
  /** Whether the database has a ledger (default: asked). */
  ledger?: boolean;
  /** Liveness of a checkpoint's writer (tests). */
  isAlive?: (pid: number) => boolean;
}

/** Runs of this data directory, newest first, filtered. */
export async function listAllRuns(
  db: TraceDb,
  options: RunListOptions,
): Promise<RunList> {
  const unreadable: string[] = [];
  const ledger = options.ledger ?? await hasLedger(db);
  // Every match is read, not only the limit, so the list can say how many it left out.
  const matching = await runCatalog(db, {
    dataDir: options.dataDir,
    kind: options.kind,
    targetId: options.targetId,
    verdict: options.verdict,
    state: options.state,
    isAlive: options.isAlive,
    ledger,
    onUnreadable: (path) => void unreadable.push(path),
  });
  if (matching.length === 0 && options.targetId !== undefined) {
    await refuseUnknownTarget(db, { ...options, ledger }, options.targetId);
  }
  const offset = options.offset ?? 0;
  const runs = matching.slice(
    offset,
    offset + (options.limit ?? DEFAULT_RUN_LIMIT),
  );
  const links = ledger ? await runLinks(db) : null;
  return {
    schema: "trace.run-list/1",
    runs: runs.map((run) => listItem(run, links)),
    total: matching.length,
    truncated: offset + runs.length < matching.length,
    unreadable,
  };
}

/**
 * An empty list for a target id nothing knows is a typo, not "no runs":
 * refused as `external-regressions` and `external-gate` refuse it.
 */
async function refuseUnknownTarget(
  db: TraceDb,
  options: RunListOptions,
  targetId: string,
): Promise<void> {
  const known = options.ledger
    ? [
      ...(await listTargets(db)).map((target) => target.target_id),
      ...(await listUnregisteredTargets(db)).map((target) => target.target_id),
    ]
    : [];
  if (known.includes(targetId)) return;
  const anyRun = await runCatalog(db, {
    dataDir: options.dataDir,
    targetId,
    limit: 1,
    isAlive: options.isAlive,
    ledger: options.ledger,
    onUnreadable: () => {},
  });
  if (anyRun.length > 0) return;
  const near = closestName(targetId, known);
  throw new NotFoundError(
    `No target "${targetId}" is registered or has a run; ${
      near ? `did you mean "${near}"? ` : ""
    }trace external-targets --all lists the targets`,
  );
}

interface RunLinks {
  replays: Map<string, string>;
  saved: Map<string, string>;
  registered: Set<string>;
}

async function runLinks(db: TraceDb): Promise<RunLinks> {
  const replays = new Map(
    (await listReplays(db)).map((r) => [r.run_id, r.regression_id]),
  );
  const saved = new Map(
    (await listRegressions(db)).map((r) => [r.source_run_id, r.regression_id]),
  );
  const registered = new Set((await listTargets(db)).map((t) => t.target_id));
  return { replays, saved, registered };
}

function listItem(run: RunSummary, links: RunLinks | null): RunListItem {
  // Only runs the ledger holds are saved regressions, or replays it links.
  const linked = run.kept_in === "ledger" ? links : null;
  return {
    run_id: run.run_id,
    kind: run.kind,
    target_id: run.target_id,
    target_registered: run.kind === "reference"
      ? null
      : links?.registered.has(run.target_id) ?? false,
    verdict: run.verdict,
    state: run.state,
    started_at: run.started_at,
    kept_in: run.kept_in,
    regression_id: linked?.replays.get(run.run_id) ??
      run.checkpoint_replays ?? null,
    saved_as: linked?.saved.get(run.run_id) ?? null,
    cleanup: run.cleanup,
  };
}
