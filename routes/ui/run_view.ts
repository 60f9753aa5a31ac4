/**
 * Everything the run detail page, its JSON twin and the standalone HTML
 * file show about one run: the run as `external-show` sees it (ledger
 * report, kept report, or checkpoint: running or interrupted), the live
 * progress of a job this server runs, the verdict and why in one sentence,
 * what to do next, and the run's requests from the observability index.
 *
 * @module
 */

import type { TraceDb } from "../../lib/db.ts";
import { NotFoundError } from "../../lib/errors.ts";
import { cleanupsOf } from "../../lib/ledger/cleanups.ts";
import {
  readRegression,
  type RegressionDefinition,
  replayOfRun,
  savedRegressionOf,
} from "../../lib/ledger/regressions.ts";
import { readRun, validateRunId } from "../../lib/ledger/runs.ts";
import type { ReplayRecurrence } from "../../lib/ledger/recurrence.ts";
import { hasLedger } from "../../lib/ledger/schema.ts";
import { readTarget } from "../../lib/ledger/targets.ts";
import type { RunReport, TargetRef, Verdict } from "../../lib/runner/report.ts";
import { controlWord } from "../../lib/runner/control_state.ts";
import {
  type JobProgress,
  recurrenceViewOf,
  referenceRunView,
  reportView,
  type RunJobs,
  type RunView,
  viewRun,
} from "../../lib/runs/mod.ts";
import { asSentence } from "./components/findings_list.tsx";
import { loadRunRequests, type RunRequests } from "./run_requests.ts";
import {
  cleanupStep,
  type NextStep,
  nextSteps,
  reportHeadline,
  unregisteredTarget,
} from "./run_words.ts";

/** What run pages read runs from. */
export interface RunSource {
  db: TraceDb;
  /** The data directory of checkpoints; `null`: the ledger only. */
  dataDir: string | null;
  /** The server's job manager: live progress, and runs started from the UI. */
  jobs: RunJobs | null;
}

/** Where a run stands, as the pages say it. */
export type RunDetailState = "running" | "completed" | "interrupted" | "failed";

/** The data of `/runs/:id` and `/runs/:id.json`. */
export interface RunDetail {
  schema: "trace.ui.run/1";
  run_id: string;
  kind: RunReport["kind"];
  /** `failed`: a job of this server stopped with an error before its report. */
  state: RunDetailState;
  /** RUNNING while it runs; INCONCLUSIVE for interrupted and failed runs. */
  verdict: Verdict | "RUNNING";
  target: TargetRef;
  /** Whether the target is registered (`false`: a config run such as quickstart's; `null`: not known). */
  target_registered: boolean | null;
  started_at: string;
  finished_at: string | null;
  /** The regression this run replayed. */
  regression_id: string | null;
  /** The regression this run was saved as. */
  saved_as: string | null;
  /** The latest `trace external-cleanup` of this run, if any. */
  later_cleanup: RunView["cleanup"];
  /** For a replay: the run its regression was saved from (to compare with). */
  compare_with: string | null;
  /**
   * For a completed replay that did not pass: whether the failure its
   * regression was saved for came back, it failed on something else, or it
   * cannot say (INCONCLUSIVE).
   */
  recurrence: ReplayRecurrence | null;
  /** {@link RunDetail.recurrence} as a sentence, shown with the verdict. */
  recurrence_sentence: string | null;
  /** The verdict and why, in one sentence. */
  headline: string;
  /** What to do next (empty for a clean PASS). */
  next_steps: NextStep[];
  /** The finished report; `null` while running, for interrupted and failed runs. */
  report: RunReport | null;
  /** For a run without a finished report: what its checkpoint recorded. */
  checkpoint: RunView["checkpoint"];
  /** While a job of this server runs it. */
  progress: JobProgress | null;
  /** The progress in words (what the page shows and updates live). */
  progress_text: { status: string; sample: string } | null;
  /** Why a failed job failed. */
  error: string | null;
  /** What the state means, in words, when it needs saying. */
  note: string | null;
  /** Where the run's record is: the ledger (verified), a kept report file, or only a checkpoint. */
  kept_in: RunView["kept_in"];
  /** The run's requests from its trace events. */
  requests: RunRequests;
  /** A reference run judged against its system's expectation. */
  reference: {
    system: string | null;
    expected: string | null;
    observed: string | null;
    matches: boolean | null;
    mismatches: string[];
  } | null;
}

/** Loads one run; a `NotFoundError` when nothing knows it. */
export async function loadRunDetail(
  source: RunSource,
  runId: string,
): Promise<RunDetail> {
  validateRunId(runId);
  const view = await locate(source, runId);
  const requests = await loadRunRequests(source.db, runId);
  if (view.report) {
    return completedDetail(source, view, view.report, requests);
  }
  const job = view.state === "running" && source.jobs
    ? await source.jobs.get(runId)
    : null;
  if (job?.state === "completed" && job.report) {
    // Finished between the two reads.
    return completedDetail(source, view, job.report, requests);
  }
  const state: RunDetailState = job?.state === "failed"
    ? "failed"
    : view.state === "running"
    ? "running"
    : view.state === "completed"
    ? "completed"
    : "interrupted";
  const issued = view.checkpoint
    ? view.checkpoint.issued.test.length + view.checkpoint.issued.control.length
    : 0;
  const cleaned = view.cleanup?.cleanup_complete === true
    ? view.cleanup.markers_queried ? "verified" : "inventories"
    : null;
  return {
    ...base(view),
    state,
    verdict: state === "running"
      ? "RUNNING"
      : state === "completed"
      ? view.verdict
      : "INCONCLUSIVE",
    headline: state === "completed"
      ? `Completed, but its report is not in the ledger and was not kept: the verdict ${view.verdict} comes from its checkpoint alone.`
      : unfinishedHeadline(state, job?.progress ?? null, issued, cleaned),
    next_steps: state === "running" || cleaned !== null ? [] : [
      cleanupStep(runId, {
        unregistered: view.checkpoint
          ? unregisteredTarget(
            view.target_registered,
            view.target.id,
            view.checkpoint.namespaces,
          )
          : null,
        laterCleanup: view.cleanup,
      }),
    ],
    progress: job?.progress ?? null,
    progress_text: state === "running"
      ? {
        status: progressWords(job?.progress ?? null),
        sample: sampleWords(job?.progress?.sample ?? null),
      }
      : null,
    error: job?.error ?? null,
    note: job?.note ?? view.note,
    requests,
    reference: null,
  };
}

async function locate(source: RunSource, runId: string): Promise<RunView> {
  // Said to a browser: no server path, and no command-line flag to check.
  const notFound = () =>
    new NotFoundError(
      `Cannot find run ${runId} among this server's runs; check the id`,
    );
  if (source.dataDir !== null) {
    try {
      return await viewRun(source.db, runId, { dataDir: source.dataDir });
    } catch (error) {
      throw error instanceof NotFoundError ? notFound() : error;
    }
  }
  const report = await hasLedger(source.db)
    ? await readRun(source.db, runId)
    : null;
  if (!report) throw notFound();
  const replay = await replayOfRun(source.db, runId);
  // What the ledger links to the run, as the full server reads it: a later
  // external-cleanup, the regression it was saved as, and whether its
  // target is registered (external-cleanup reaches a run through it).
  const cleanups = await cleanupsOf(source.db, runId, report.target.id);
  return reportView(report, {
    regressionId: replay?.regression_id ?? null,
    savedAs: await savedRegressionOf(source.db, runId),
    cleanup: cleanups.at(-1) ?? null,
    targetRegistered: report.kind === "reference"
      ? null
      : (await readTarget(source.db, report.target.id)) !== null,
  });
}

/** The regression `runId` was saved as, if it was (its id derives from the run's). */
function base(view: RunView): Omit<
  RunDetail,
  | "state"
  | "headline"
  | "next_steps"
  | "progress"
  | "progress_text"
  | "error"
  | "note"
  | "requests"
  | "reference"
> {
  return {
    schema: "trace.ui.run/1",
    run_id: view.run_id,
    kind: view.report?.kind ?? "external",
    verdict: view.verdict,
    target: view.target,
    target_registered: view.target_registered,
    started_at: view.started_at,
    finished_at: view.report?.finished_at ?? null,
    regression_id: view.regression_id,
    saved_as: view.saved_as,
    later_cleanup: view.cleanup,
    compare_with: null,
    recurrence: null,
    recurrence_sentence: null,
    report: view.report,
    checkpoint: view.checkpoint,
    kept_in: view.kept_in,
  };
}

async function completedDetail(
  source: RunSource,
  view: RunView,
  report: RunReport,
  requests: RunRequests,
): Promise<RunDetail> {
  const savedAs = view.saved_as;
  const replayed = view.regression_id
    ? await readRegression(source.db, view.regression_id)
    : null;
  const context = {
    regressionId: view.regression_id,
    savedAs,
    saved: savedAs ? await readRegression(source.db, savedAs) : null,
    laterCleanup: view.cleanup,
    unregistered: unregisteredTarget(
      view.target_registered,
      view.target.id,
      report.namespaces,
    ),
  };
  return {
    ...base(view),
    kind: report.kind,
    verdict: report.verdict,
    finished_at: report.finished_at,
    report,
    state: report.state === "interrupted" ? "interrupted" : "completed",
    saved_as: savedAs,
    compare_with: replayed?.source_run_id ?? null,
    ...recurrenceOf(replayed?.definition ?? null, report),
    headline: reportHeadline(report),
    next_steps: nextSteps(report, context),
    progress: null,
    progress_text: null,
    error: null,
    // external-show's note for reference runs names a CLI command; the page links instead.
    note: report.kind === "reference" ? null : view.note,
    requests,
    reference: report.kind === "reference"
      ? await referenceJudgement(source.db, report.run_id)
      : null,
  };
}

/** What a replay of `definition`'s regression showed of its saved failure. */
function recurrenceOf(
  definition: RegressionDefinition | null,
  report: RunReport,
): Pick<RunDetail, "recurrence" | "recurrence_sentence"> {
  const view = definition && recurrenceViewOf(definition, report);
  return {
    recurrence: view?.recurrence ?? null,
    recurrence_sentence: view ? asSentence(view.sentence) : null,
  };
}

/** A reference run against its system's expectation. */
async function referenceJudgement(
  db: TraceDb,
  runId: string,
): Promise<RunDetail["reference"]> {
  const view = await referenceRunView(db, runId);
  return {
    system: view?.system ?? null,
    expected: view?.evaluation?.expected ?? null,
    observed: view?.evaluation?.observed ?? null,
    matches: view?.evaluation?.matches ?? null,
    mismatches: view?.evaluation?.mismatches ?? [],
  };
}

/**
 * The detail of a report just made (`--html` on a run or replay): the same
 * as {@link loadRunDetail}, without looking the run up again, so it works
 * whether or not the ledger took the report.
 */
export async function reportDetail(
  source: RunSource,
  report: RunReport,
  regressionId: string | null,
): Promise<RunDetail> {
  const view = reportView(report, { regressionId });
  const requests = await loadRunRequests(source.db, report.run_id);
  return await completedDetail(source, view, report, requests);
}

const PHASE_WORDS: Record<string, string> = {
  ingest: "writing the synthetic documents",
  baseline: "reading the baseline (the queries warm the caches)",
  delete: "deleting the synthetic documents",
  window: "sampling every store through the deletion window",
  cleanup: "cleaning up: deleting every issued id and polling both namespaces",
  done: "finishing",
};

/** What a running job is doing, in words. */
export function progressWords(progress: JobProgress | null): string {
  if (!progress) return "running in another process";
  const sample = progress.sample;
  if (progress.phase === "window" && sample) {
    return `${PHASE_WORDS.window}: sample #${sample.index} at ${
      sample.started_at_seconds.toFixed(2)
    } s of ${sample.window_seconds} s`;
  }
  return PHASE_WORDS[progress.phase] ?? progress.phase;
}

/** The last sample of a running job, in words. */
export function sampleWords(sample: JobProgress["sample"]): string {
  if (!sample) return "none yet";
  const inv = sample.inventory;
  const counts = inv
    ? `source ${inv.source_records}, vector ${inv.vector_records}, cache ${inv.cache_records}`
    : "inventory failed";
  const marker = sample.marker_seen === null
    ? "marker unknown"
    : sample.marker_seen
    ? "marker SEEN"
    : "marker gone";
  return `#${sample.index} at ${
    sample.started_at_seconds.toFixed(2)
  } s of ${sample.window_seconds} s: ${counts}; ${marker}; control ${
    controlWord(sample.control)
  }`;
}

function unfinishedHeadline(
  state: RunDetailState,
  progress: JobProgress | null,
  issued: number,
  /** What a complete later cleanup could check: with the markers, or the inventories only; `null` without one. */
  cleaned: "verified" | "inventories" | null,
): string {
  if (state === "running") {
    return `Running, no verdict yet: ${progressWords(progress)}.`;
  }
  const ids = `${issued} synthetic id${issued === 1 ? "" : "s"}`;
  const left = cleaned === "verified"
    ? `a later cleanup deleted the ${ids} it issued: every store read 0 and neither marker was retrievable`
    : cleaned === "inventories"
    ? `a later cleanup deleted the ${ids} it issued and both inventories read 0 (retrieval was not checked)`
    : `${ids} it issued may remain in the staging application`;
  if (state === "failed") {
    return `The run stopped with an error before its final sample, so nothing was decided; ${left}.`;
  }
  return `The run was interrupted before a completed report was kept, so nothing was decided; ${left}.`;
}
