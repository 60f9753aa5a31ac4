/**
 * The nine external tools: list registered targets, plan a run, start one
 * in the background, poll it, save a failing run as a regression, replay a
 * regression, compare two runs, and list runs and saved regressions. Targets are named by registered id only
 * (registration stays a CLI action), and a run goes through the process's
 * job manager, so one external run at a time per process and a run left by
 * a process that is gone reads as interrupted, INCONCLUSIVE.
 *
 * @module
 */

import * as v from "valibot";
import type { RunPlan } from "../runner/plan.ts";
import { planRun } from "../runner/plan.ts";
import {
  compareStoredRuns,
  listAllRuns,
  type ListedRegression,
  listSavedRegressions,
  MAX_RUN_OFFSET,
  readRunTarget,
  type ReplayRecurrenceView,
  replayRecurrenceView,
  RUN_LIST_FILTERS,
  type RunJobView,
  type RunList,
  type RunView,
  saveRun,
  type StartedJob,
  stillServedAdvice,
  targetListing,
  viewRun,
  whatToCheck,
} from "../runs/mod.ts";
import {
  EXTERNAL_HINT,
  RegressionIdArg,
  RunIdArg,
  strictArgs,
  TargetIdArg,
} from "./_args.ts";
import {
  defineTool,
  LEDGER_WRITE,
  READS,
  TARGET_RUN,
  type TraceTool,
} from "./_tool.ts";
import { type McpToolContext, requireRunningRole } from "./context.ts";
import { toolAdvice } from "./_tool_advice.ts";
import { outputBound, type PageRules, shrinkPageToFit } from "./_bound.ts";
import { clientPresenter } from "./_remote_text.ts";

/** Most runs one listing returns. */
const MAX_RUNS_LISTED = 500;

const POLL_HINT =
  "poll trace.external_get with this run_id until state is completed, failed or interrupted; starting is not completing";

const targets = defineTool({
  name: "trace.external_targets",
  title: "List registered staging targets",
  description:
    "Lists the staging targets registered with trace external-register (id, base URL, timing, when registered, runs, first and last run). Other external tools take these ids; targets cannot be registered over MCP. Retired targets, which refuse new runs, are listed only with all: true. Also lists, as unregistered, the targets known only from runs of a config that was never registered (such as trace quickstart's): trace.external_runs lists their runs, but no tool can run, replay or clean them up.",
  input: strictArgs({
    all: v.optional(v.pipe(
      v.boolean("must be true or false"),
      v.description("Also list retired targets (default false)"),
    )),
  }, EXTERNAL_HINT),
  annotations: READS,
  run: async ({ all }, { db }) => {
    // The listing external-targets --json prints, so the two never drift
    // (a retirement with its schema and ledger entry; the unregistered
    // targets no tool can act on).
    const listing = await targetListing(db, { all: all ?? false });
    return {
      ...listing,
      note: listing.targets.length === 0
        ? `no ${
          all ? "" : "active "
        }target is registered; register one locally with trace external-register --target ID --config FILE`
        : null,
    };
  },
});

const plan = defineTool({
  name: "trace.external_plan",
  title: "Plan a deletion contract run",
  description:
    "Shows what a run against a registered target would do: namespaces, operations, documents, deletion window, samples and request budget. Sends no request and writes nothing.",
  input: strictArgs({ target_id: TargetIdArg }, EXTERNAL_HINT),
  annotations: READS,
  run: async ({ target_id }, { db, jobs }): Promise<RunPlan> => {
    const { config, target } = await readRunTarget(db, target_id);
    jobs.checkToken(config);
    return planRun(config, target);
  },
});

function started(job: StartedJob): object {
  return { ...job, state: "running", next: POLL_HINT };
}

const start = defineTool({
  name: "trace.external_start",
  title: "Start a deletion contract run",
  description:
    "Starts the synthetic deletion contract against a registered target in the background and returns its run_id at once. The run writes synthetic documents into the staging application, deletes them, samples every store through the deletion window and cleans up. One external run at a time per process: a second start is refused naming the running run.",
  input: strictArgs({ target_id: TargetIdArg }, EXTERNAL_HINT),
  annotations: TARGET_RUN,
  run: async ({ target_id }, { jobs, principal }) => {
    requireRunningRole(principal, "trace.external_start");
    return started(await jobs.start({ targetId: target_id }));
  },
});

const replay = defineTool({
  name: "trace.external_replay",
  title: "Replay a saved regression",
  description:
    "Replays a saved regression in the background with fresh synthetic data against its registered target, under the pinned contract, and returns the new run_id at once. Refused before any request when the target config, protocol revision or contract drifted. Same effects as trace.external_start. Once the replay completed without passing, trace.external_get says in recurrence whether the failure the regression was saved for came back, it failed on something else, or it cannot say (INCONCLUSIVE).",
  input: strictArgs({ regression_id: RegressionIdArg }, EXTERNAL_HINT),
  annotations: TARGET_RUN,
  run: async ({ regression_id }, { jobs, principal }) => {
    requireRunningRole(principal, "trace.external_replay");
    return {
      ...started(await jobs.start({ regressionId: regression_id })),
      next:
        `${POLL_HINT}; once it completed without passing, its recurrence says whether the failure the regression was saved for came back`,
    };
  },
});

/** What to do after reading a run, in words. */
function nextStep(
  view: RunJobView,
  links: RunView | null,
  replayed: ReplayRecurrenceView | null,
): string {
  if (view.report?.kind === "reference") {
    return "a reference run: trace.reference_get and trace.reference_explain read it; reference runs are not saved, replayed or cleaned up";
  }
  if (view.report?.state === "interrupted") {
    return "the run was stopped before its window ended (INCONCLUSIVE, never PASS): read findings and cleanup, then run it again (trace.external_start, or trace.external_replay for a replay)";
  }
  switch (view.state) {
    case "running":
      return "the run is still going: poll trace.external_get again in a few seconds";
    case "failed":
      return "the run stopped without a report: inspect the issued synthetic ids in its checkpoint (checkpoint_path) before starting again";
    case "interrupted": {
      const served = stillServedAdvice(view.run_id, links?.cleanup ?? null);
      if (served !== null) {
        return `the run never completed (INCONCLUSIVE, never PASS); a later ${served}, and only then start a new run with trace.external_start (later_cleanup has what it found)`;
      }
      if (links?.cleanup?.cleanup_complete) {
        return links.cleanup.markers_queried
          ? "the run never completed (INCONCLUSIVE, never PASS); a later cleanup removed its synthetic ids and found its markers no longer retrievable (later_cleanup), so start a new run with trace.external_start"
          : "the run never completed (INCONCLUSIVE, never PASS); a later cleanup found both inventories at 0 but could not check retrieval (later_cleanup): check the namespaces with the application's own tools, then start a new run with trace.external_start";
      }
      return "the run never completed (INCONCLUSIVE, never PASS): the synthetic ids listed in checkpoint may remain; remove them as note says before rerunning";
    }
    case "completed":
      if (view.verdict === "FAIL") {
        if (view.regression_id !== null) {
          return replayed
            ? `the replay FAILed: ${replayed.sentence}; compare it with the saved run ${replayed.source_run_id} with trace.external_compare for the details`
            : "the replay FAILed: compare it with the saved run with trace.external_compare to see whether the failure the regression was saved for recurred or it failed on something else";
        }
        return links?.saved_as
          ? `the run FAILed and is saved as regression ${links.saved_as}: after the fix, replay it with trace.external_replay regression_id=${links.saved_as}`
          : "the run FAILed: read findings and cleanup, then save it with trace.external_save to replay it after a fix";
      }
      if (view.verdict === "PASS") {
        return "the run PASSed; after a replay, compare it with the failing run with trace.external_compare";
      }
      return replayed
        ? `the replay is ${replayed.sentence}; read findings (baseline, requests, controls, cleanup) to see what could not be established, then replay again`
        : "the run is INCONCLUSIVE: read findings (baseline, requests, controls, cleanup) to see what could not be established";
  }
}

/** A note written in the CLI's words, with each command that has a tool named as that tool. */
function adviceOf(note: string | null): string | null {
  return note === null ? null : toolAdvice(note);
}

/**
 * What the ledger links to a run that no longer runs here, as `external-show`
 * shows it (the regression it was saved as, a later `external-cleanup`, the
 * note on what is left), or `null` for a run still running, failed, or whose
 * report was kept nowhere.
 */
async function runLinks(
  context: McpToolContext,
  view: RunJobView,
): Promise<RunView | null> {
  if (view.state !== "completed" && view.state !== "interrupted") return null;
  if (view.recording?.kept_in === "nowhere") return null;
  return await viewRun(context.db, view.run_id, { dataDir: context.dataDir });
}

const get = defineTool({
  name: "trace.external_get",
  title: "Poll a run",
  description:
    "Reports a run's state: running (phase, requests, last sample), completed (verdict, findings, cleanup, samples), failed (why), or interrupted (a run whose process is gone: INCONCLUSIVE, never PASS, with the synthetic ids it issued). Also says which regression a FAIL was saved as, what a later cleanup of the run found, and for a replay that did not pass whether the failure its regression was saved for came back (recurrence: recurred, other_failure or inconclusive).",
  input: strictArgs({ run_id: RunIdArg }, EXTERNAL_HINT),
  annotations: READS,
  run: async ({ run_id }, context) => {
    const view = await context.jobs.get(run_id);
    const links = await runLinks(context, view);
    const report = view.report;
    const replayed = report && view.regression_id !== null
      ? await replayRecurrenceView(context.db, view.regression_id, report)
      : null;
    return {
      run_id: view.run_id,
      // A run stopped early keeps its report, recorded interrupted: the state external_runs shows.
      state: report?.state === "interrupted" ? "interrupted" : view.state,
      verdict: view.verdict,
      target_id: view.target_id,
      regression_id: view.regression_id,
      started_at: view.started_at,
      progress: view.progress,
      findings: report?.findings ?? null,
      cleanup: report?.cleanup ?? null,
      baseline: report?.baseline ?? null,
      deletion: report?.deletion ?? null,
      timing: report?.timing ?? null,
      requests: report?.requests ?? null,
      namespaces: report?.namespaces ?? null,
      // The sample that decides the verdict, kept apart so a cut answer still has it.
      final_sample: report?.samples.at(-1) ?? null,
      samples: report?.samples ?? null,
      recording: view.recording,
      trace: view.trace,
      regression: view.regression,
      // A replay that did not pass: whether the saved failure came back.
      recurrence: replayed?.recurrence ?? null,
      saved_as: links?.saved_as ?? null,
      later_cleanup: links?.cleanup ?? null,
      checkpoint: view.state === "interrupted"
        ? links?.checkpoint ?? null
        : null,
      // A failed job's checkpoint is what is left to inspect: say where it is.
      checkpoint_path: view.state === "failed" ? view.checkpoint_path : null,
      error: view.error,
      note: adviceOf(links?.note ?? view.note),
      // The report's "What to check", as external-show gives it.
      what_to_check: report ? whatToCheck(report) : [],
      next: nextStep(view, links, replayed),
    };
  },
});

const save = defineTool({
  name: "trace.external_save",
  title: "Save a failing run as a regression",
  description:
    "Saves a completed FAIL as a regression pinning the target, protocol revision, timing, document count and the failed assertions. Writes to the local ledger only; saving the same run again changes nothing. Any other run (PASS, INCONCLUSIVE, running, interrupted) is refused.",
  input: strictArgs({ run_id: RunIdArg }, EXTERNAL_HINT),
  annotations: LEDGER_WRITE,
  run: async ({ run_id }, { db, dataDir, principal }) => {
    requireRunningRole(principal, "trace.external_save");
    const saved = await saveRun(db, run_id, { dataDir });
    return {
      ...saved,
      next:
        `after the fix, replay it with trace.external_replay regression_id=${saved.regression.regression_id}`,
    };
  },
});

const compare = defineTool({
  name: "trace.external_compare",
  title: "Compare two runs",
  description:
    "Compares two completed runs of the same target under the same contract (typically the failing run and its replay): both verdicts, findings fixed, still present and new, and both cleanup outcomes. Refuses runs of different targets, configs or contracts.",
  input: strictArgs({ run_a: RunIdArg, run_b: RunIdArg }, EXTERNAL_HINT),
  annotations: READS,
  run: async ({ run_a, run_b }, { db }) =>
    await compareStoredRuns(db, run_a, run_b),
});

/** One of a run-list filter's values, optional. */
function filterArg<const T extends readonly [string, ...string[]]>(values: T) {
  return v.optional(
    v.picklist(values, `must be one of ${values.join(", ")}`),
  );
}

/** Files named at most in a listing's note; the count says how many there are. */
const UNREADABLE_NAMED = 3;

/** What a run listing leaves out and why, or `null` when it left nothing out and found runs. */
function runsNote(
  page: RunsPage,
  unreadable: readonly string[],
  kind: string | undefined,
): string | null {
  // Reference runs are started by their own tool.
  const start = kind === "reference"
    ? "trace.reference_run"
    : "trace.external_start";
  const none = page.shown > 0
    ? null
    : page.offset > 0 && page.total > 0
    ? `offset ${page.offset} is past the last of the ${page.total} matching runs; pass a smaller offset, or none for the newest`
    : `no run matches; start one with ${start}`;
  if (unreadable.length === 0) return none;
  const named = unreadable.slice(0, UNREADABLE_NAMED).join(", ");
  const more = unreadable.length > UNREADABLE_NAMED
    ? ` and ${unreadable.length - UNREADABLE_NAMED} more`
    : "";
  const left =
    `${unreadable.length} checkpoint or kept report file(s) cannot be read or trusted and are left out (${named}${more}); trace.external_get on a file's run id names the problem`;
  return none === null ? left : `${none}; ${left}`;
}

/** Where one page of a run listing sits among the matching runs. */
interface RunsPage {
  offset: number;
  /** Runs on this page (the limit, or fewer when the output bound needs it). */
  shown: number;
  /** Runs the limit asked for and the listing found. */
  listed: number;
  total: number;
}

/** The offset of the page after `page`, or `null` when no older run follows. */
function nextOffset(page: RunsPage): number | null {
  const next = page.offset + page.shown;
  return next < page.total ? next : null;
}

/** Says how to list the older runs a page left out, naming the argument. */
function nextPageHint(page: RunsPage): string | null {
  const next = nextOffset(page);
  if (next === null) return null;
  const bound = page.shown < page.listed
    ? ` (the output bound kept this page to ${page.shown} runs)`
    : "";
  return `${
    page.total - next
  } older matching run(s) follow${bound}: call trace.external_runs again with offset ${next} and the same filters`;
}

function runsAnswer(list: RunList, page: RunsPage, kind: string | undefined) {
  const next = nextOffset(page);
  return {
    runs: list.runs.slice(0, page.shown),
    total: list.total,
    offset: page.offset,
    truncated: next !== null,
    next_offset: next,
    next: nextPageHint(page),
    unreadable: list.unreadable.length,
    note: runsNote(page, list.unreadable, kind),
  };
}

/** A listed run, the one object whose entries may be cut. */
const LISTED_RUN = /^runs\[\d+\]$/;

/**
 * How a page of one run still over the bound is cut: the run keeps its
 * first fields (its id first), never the runs list itself.
 */
const RUNS_PAGE_RULES: PageRules = {
  cutsEntries: (path) => LISTED_RUN.test(path),
  note:
    "runs named in cuts keep only their first fields, so next_offset still follows the last run shown; trace.external_get reads a run whole",
};

/**
 * The answer with as many of the listed runs as fit the output bound: a
 * shorter page keeps `next_offset` exact, where the bound cutting the list
 * would skip the runs it cut.
 */
function boundedRunsAnswer(
  list: RunList,
  offset: number,
  kind: string | undefined,
  context: McpToolContext,
): Promise<object> {
  const page = (shown: number): RunsPage => ({
    offset,
    shown,
    listed: list.runs.length,
    total: list.total,
  });
  return shrinkPageToFit(
    {
      list: "runs",
      size: list.runs.length,
      answer: runsAnswer(list, page(list.runs.length), kind),
      answerOf: (shown) => runsAnswer(list, page(shown), kind),
    },
    outputBound(context.maxOutputChars),
    { ...RUNS_PAGE_RULES, present: clientPresenter(context) },
  );
}

const runs = defineTool({
  name: "trace.external_runs",
  title: "List runs",
  description:
    "Lists runs newest first: completed external and reference runs from the ledger, and runs only a checkpoint knows (running, or interrupted: INCONCLUSIVE), each with its verdict, state, cleanup and the regression it replayed or was saved as. A page holds at most limit runs (default 50) after the newest offset (default 0); total is how many match, and when older runs follow, truncated is true, next_offset is the offset of the next page and next says so: call again with that offset and the same filters. trace.external_get takes any run id here; trace.external_save takes a completed FAIL of kind external, kept_in ledger, whose target is registered (target_registered true); trace.external_compare takes two runs of kind external, kept_in ledger, of one target. Reference runs (kind reference) are neither saved nor compared: trace.reference_get and trace.reference_explain read them.",
  input: strictArgs({
    target_id: v.optional(TargetIdArg),
    verdict: filterArg(RUN_LIST_FILTERS.verdict),
    kind: filterArg(RUN_LIST_FILTERS.kind),
    state: filterArg(RUN_LIST_FILTERS.state),
    limit: v.optional(v.pipe(
      v.number("must be a number"),
      v.integer("must be an integer"),
      v.minValue(1, "must be at least 1"),
      v.maxValue(MAX_RUNS_LISTED, `must be at most ${MAX_RUNS_LISTED}`),
      v.description("At most this many runs (default 50)"),
    )),
    offset: v.optional(v.pipe(
      v.number("must be a number"),
      v.integer("must be an integer"),
      v.minValue(0, "must be at least 0"),
      v.maxValue(MAX_RUN_OFFSET, `must be at most ${MAX_RUN_OFFSET}`),
      v.description(
        "Skip this many of the newest matching runs first (default 0); pass a listing's next_offset for its next page",
      ),
    )),
  }, EXTERNAL_HINT),
  annotations: READS,
  run: async ({ target_id, verdict, kind, state, limit, offset }, context) => {
    const list = await listAllRuns(context.db, {
      dataDir: context.dataDir,
      ...(target_id === undefined ? {} : { targetId: target_id }),
      ...(verdict === undefined ? {} : { verdict }),
      ...(kind === undefined ? {} : { kind }),
      ...(state === undefined ? {} : { state }),
      ...(limit === undefined ? {} : { limit }),
      ...(offset === undefined ? {} : { offset }),
    });
    return boundedRunsAnswer(
      list,
      offset ?? 0,
      kind,
      context,
    );
  },
});

const regressions = defineTool({
  name: "trace.external_regressions",
  title: "List saved regressions",
  description:
    "Lists the saved regressions, optionally of one registered target: status (pending until a replay passes, then enforced), the latest recorded replay's result and run, the number of replays, and unfinished_replay: a replay that never finished (killed, or still running: running true) and started after the latest recorded one, which is then the latest replay and did not pass, as the gate judges it (null otherwise). Regression ids here are what trace.external_replay takes.",
  input: strictArgs({ target_id: v.optional(TargetIdArg) }, EXTERNAL_HINT),
  annotations: READS,
  run: async ({ target_id }, { db, dataDir }) => {
    const listed = await listSavedRegressions(db, target_id, { dataDir });
    return {
      regressions: listed,
      note: regressionsNote(listed),
    };
  },
});

/** What a listing asks of the caller: save a FAIL first, or finish what a killed replay left. */
function regressionsNote(listed: readonly ListedRegression[]): string | null {
  if (listed.length === 0) {
    return "no saved regression; save a failing run with trace.external_save";
  }
  const killed = listed.flatMap((r) =>
    r.unfinished_replay && !r.unfinished_replay.running
      ? [
        `${r.regression_id}: latest replay ${r.unfinished_replay.run_id} did not finish, so it did not pass; remove what it may have left with trace external-cleanup ${r.unfinished_replay.run_id} (a command for the user), then replay again with trace.external_replay regression_id=${r.regression_id}`,
      ]
      : []
  );
  return killed.length === 0 ? null : killed.join("; ");
}

/** The external tools, in documentation order. */
export const EXTERNAL_TOOLS: readonly TraceTool[] = [
  targets,
  plan,
  start,
  get,
  save,
  replay,
  compare,
  runs,
  regressions,
];
