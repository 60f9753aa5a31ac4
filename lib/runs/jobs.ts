/**
 * Runs in the background, for servers: `start` returns a run id as soon as
 * the run's checkpoint exists and the run goes on in the background; `get`
 * answers running (with progress), completed (with the report), failed, or
 * interrupted. One external run at a time per process, through the same
 * lock as every other external run (the CLI's too). Make one manager per
 * process and hand it to every entry point that starts runs.
 *
 * A run this manager does not hold (another process's, or one from before a
 * restart) is looked up like `external-show` does: a checkpoint without a
 * completed ledger row whose process is gone is `interrupted`, INCONCLUSIVE.
 *
 * @module
 */

import type { StagingConfig } from "../contract/config.ts";
import type { Inventory, StagingTransport } from "../contract/protocol.ts";
import type { TraceDb } from "../db.ts";
import { errorMessage, TokenEnvUnsetError } from "../errors.ts";
import type { RegressionView } from "../ledger/regressions.ts";
import { validateRunId } from "../ledger/runs.ts";
import type { Clock } from "../runner/clock.ts";
import type { RunEvent, RunPhase } from "../runner/events.ts";
import type { ControlState } from "../runner/control_state.ts";
import type { RunReport, Verdict } from "../runner/report.ts";
import {
  type ExternalRunOptions,
  type ExternalRunOutcome,
  runExternal,
  type RunRecording,
} from "./external_run.ts";
import { prepareReplay, runReplay } from "./replay.ts";
import { PROCESS_RUN_LOCK, type RunLock } from "./run_lock.ts";
import type { TraceWrite } from "./run_traces.ts";
import { keptNote, lostNote } from "./kept_report.ts";
import { type LocatedRun, locateRun } from "./run_view.ts";
import { checkConfigToken, readRunTarget } from "./targets.ts";

/** What to start: a run of a registered target, or a replay of a saved regression. */
export type JobRequest = { targetId: string } | { regressionId: string };

/** Options for {@link RunJobs}. */
export interface RunJobsOptions {
  /** The database holding the ledger. */
  db: TraceDb;
  /** The data directory of the runs' checkpoints. */
  dataDir: string;
  /** Environment lookup for `token_env`. */
  env?: (name: string) => string | undefined;
  /**
   * What to do, one clause, when a target's `token_env` names a variable
   * `env` lacks (`variable` as messages show it): a server, whose
   * environment was fixed when it started, says how to start it again with
   * the variable set. Default: set it or remove token_env.
   */
  tokenEnvRemedy?: (variable: string) => string;
  /** Builds a run's transport (tests: in-process); the strict HTTP client by default. */
  transport?: (config: StagingConfig) => StagingTransport;
  /** Time source (tests); the system clock by default. */
  clock?: Clock;
  /** Write each run's lifecycle into the observability index (default true). */
  trace?: boolean;
  /** The lock allowing one external run at a time (default: the process's). */
  lock?: RunLock;
  /** Liveness of a checkpoint's writer (tests); `/proc` on Linux by default. */
  isAlive?: (pid: number) => boolean;
}

/** States a job can be in. */
export type JobState = "running" | "completed" | "failed" | "interrupted";

/** How far a running job got. */
export interface JobProgress {
  /** The phase the run is in. */
  phase: RunPhase;
  /** Requests sent so far. */
  requests: number;
  /** The last window sample, once one was taken. */
  sample: {
    index: number;
    started_at_seconds: number;
    window_seconds: number;
    inventory: Inventory | null;
    marker_seen: boolean | null;
    /** What the sample showed of the control namespace, against the baseline's. */
    control: ControlState;
  } | null;
}

/** A job as `get` reports it. */
export interface RunJobView {
  /** Format identifier. */
  schema: "trace.run-job/1";
  /** The run. */
  run_id: string;
  /** Where the run stands. */
  state: JobState;
  /** `null` while running and for failed jobs; interrupted runs are INCONCLUSIVE. */
  verdict: Verdict | null;
  /** The target the run is aimed at. */
  target_id: string;
  /** The regression a replay job replays. */
  regression_id: string | null;
  /** When the run started (ISO 8601). */
  started_at: string;
  /** Only while running in this process. */
  progress: JobProgress | null;
  /** The completed report. */
  report: RunReport | null;
  /** Where the completed report is kept; `null` when not known to this process. */
  recording: RunRecording | null;
  /** What became of the trace events; `null` when not known to this process. */
  trace: TraceWrite | null;
  /** A replay's regression after this run (as recorded). */
  regression: RegressionView | null;
  /** Why a failed job failed. */
  error: string | null;
  /**
   * The checkpoint file listing every id the run issued, for a run this
   * process started; `null` for others and when it was never written.
   */
  checkpoint_path: string | null;
  /** What to do next, in words. */
  note: string | null;
}

/** The answer of `start`. */
export interface StartedJob {
  /** The run id to poll. */
  run_id: string;
  /** The target it runs against. */
  target_id: string;
  /** The regression a replay replays. */
  regression_id: string | null;
  /** Path of the checkpoint that lists every id the run issues. */
  checkpoint: string;
}

type JobOutcome = ExternalRunOutcome & { regression?: RegressionView };

interface Job {
  runId: string;
  targetId: string;
  regressionId: string | null;
  startedAt: string;
  /** Where its checkpoint is, once written; `null` when it never was. */
  checkpoint: string | null;
  progress: JobProgress;
  controller: AbortController;
  outcome: JobOutcome | null;
  error: string | null;
  done: Promise<void>;
}

/** A checked request, ready to run with the job's hooks. */
interface PreparedJob {
  targetId: string;
  run: (
    hooks: Pick<ExternalRunOptions, "signal" | "onEvent" | "onStart">,
  ) => Promise<JobOutcome>;
}

/** Starts, tracks and cancels background runs of one data directory. */
export class RunJobs {
  readonly #options: RunJobsOptions;
  readonly #lock: RunLock;
  readonly #jobs = new Map<string, Job>();

  /** A manager over `options.db` and `options.dataDir`. */
  constructor(options: RunJobsOptions) {
    this.#options = options;
    this.#lock = options.lock ?? PROCESS_RUN_LOCK;
  }

  /** The run id of the external run this process is running, or `null`. */
  get active(): string | null {
    return this.#lock.holder;
  }

  /**
   * Starts a run in the background and returns once its checkpoint exists.
   * Refuses with a `RunBusyError` naming the running run while another
   * external run of this process holds the lock; refuses unknown targets and
   * drifted regressions before any request.
   */
  async start(request: JobRequest): Promise<StartedJob> {
    this.#lock.refuseIfHeld();
    const job: Job = {
      runId: "",
      targetId: "",
      regressionId: "regressionId" in request ? request.regressionId : null,
      startedAt: "",
      checkpoint: null,
      progress: { phase: "ingest", requests: 0, sample: null },
      controller: new AbortController(),
      outcome: null,
      error: null,
      done: Promise.resolve(),
    };
    const started = Promise.withResolvers<StartedJob>();
    const register = (runId: string, checkpoint: string | null) => {
      if (job.runId !== "") return;
      job.runId = runId;
      job.startedAt = this.#now();
      job.checkpoint = checkpoint;
      this.#jobs.set(runId, job);
      started.resolve(startedJob(job, checkpoint ?? "(not written)"));
    };
    const prepared = await this.#prepare(request);
    job.targetId = prepared.targetId;
    job.done = prepared.run({
      signal: job.controller.signal,
      onEvent: (event) => track(job.progress, event),
      onStart: ({ runId, checkpointPath }) => register(runId, checkpointPath),
    }).then(
      (outcome) => {
        // A run whose checkpoint could never be written still completes.
        register(outcome.report.run_id, null);
        job.outcome = outcome;
      },
      (error: unknown) => {
        job.error = errorMessage(error);
        started.reject(error);
      },
    );
    return await started.promise;
  }

  /** The state of a run: this process's jobs first, then the ledger and checkpoints. */
  async get(runId: string): Promise<RunJobView> {
    validateRunId(runId);
    const job = this.#jobs.get(runId);
    if (job) return jobView(job);
    const { db, dataDir, isAlive } = this.#options;
    const located = await locateRun(db, runId, {
      dataDir,
      ...(isAlive ? { isAlive } : {}),
    });
    return locatedView(located);
  }

  /** Resolves with the job's final view once it is no longer running in this process. */
  async wait(runId: string): Promise<RunJobView> {
    await this.#jobs.get(runId)?.done;
    return await this.get(runId);
  }

  /**
   * Asks a running job to stop: its window ends early, cleanup still runs,
   * and it completes INCONCLUSIVE. False when no such job is running here.
   */
  cancel(runId: string): boolean {
    const job = this.#jobs.get(runId);
    if (!job || job.outcome !== null || job.error !== null) return false;
    job.controller.abort();
    return true;
  }

  /** Cancels every running job and waits for each to clean up (server shutdown). */
  async close(): Promise<void> {
    for (const runId of this.#jobs.keys()) this.cancel(runId);
    await Promise.all([...this.#jobs.values()].map((job) => job.done));
  }

  /**
   * Refuses, sending nothing, a config whose `token_env` this process's
   * environment does not hold: a run of it would fail at its first request.
   * The refusal ends with `tokenEnvRemedy`'s clause when one was given.
   */
  checkToken(config: StagingConfig): void {
    try {
      checkConfigToken(config, this.#options.env);
    } catch (error) {
      const remedy = this.#options.tokenEnvRemedy;
      if (error instanceof TokenEnvUnsetError && remedy) {
        throw error.withRemedy(remedy);
      }
      throw error;
    }
  }

  /** Checks what `request` names (unknown target, drifted regression, unset token) before anything runs. */
  async #prepare(request: JobRequest): Promise<PreparedJob> {
    const { db, dataDir, env, clock, trace, transport } = this.#options;
    const common = {
      dataDir,
      lock: this.#lock,
      ...(env ? { env } : {}),
      ...(clock ? { clock } : {}),
      ...(trace === undefined ? {} : { trace }),
    };
    if ("regressionId" in request) {
      const prepared = await prepareReplay(db, request.regressionId);
      const config = prepared.target.config;
      this.checkToken(config);
      return {
        targetId: prepared.target.target_id,
        run: (hooks) =>
          runReplay(db, prepared, {
            ...common,
            ...hooks,
            ...(transport ? { transport: transport(config) } : {}),
          }),
      };
    }
    const { config, target } = await readRunTarget(db, request.targetId);
    this.checkToken(config);
    return {
      targetId: target.id,
      run: (hooks) =>
        runExternal(config, {
          ...common,
          ...hooks,
          db,
          target,
          ...(transport ? { transport: transport(config) } : {}),
        }),
    };
  }

  #now(): string {
    return (this.#options.clock?.wallNow() ?? new Date()).toISOString();
  }
}

function startedJob(job: Job, checkpoint: string): StartedJob {
  return {
    run_id: job.runId,
    target_id: job.targetId,
    regression_id: job.regressionId,
    checkpoint,
  };
}

function track(progress: JobProgress, event: RunEvent): void {
  if (event.type === "phase") progress.phase = event.phase;
  else if (event.type === "request") progress.requests++;
  else if (event.type === "sample") {
    const s = event.sample;
    progress.sample = {
      index: s.index,
      started_at_seconds: s.started_at_seconds,
      window_seconds: event.window_seconds,
      inventory: s.inventory,
      marker_seen: s.marker_seen,
      control: event.control,
    };
  }
}

function emptyView(runId: string, targetId: string): RunJobView {
  return {
    schema: "trace.run-job/1",
    run_id: runId,
    state: "running",
    verdict: null,
    target_id: targetId,
    regression_id: null,
    started_at: "",
    progress: null,
    report: null,
    recording: null,
    trace: null,
    regression: null,
    error: null,
    checkpoint_path: null,
    note: null,
  };
}

function jobView(job: Job): RunJobView {
  const base = {
    ...emptyView(job.runId, job.targetId),
    regression_id: job.regressionId,
    started_at: job.startedAt,
    checkpoint_path: job.checkpoint,
  };
  if (job.outcome) {
    const { report, recording, trace, regression } = job.outcome;
    return {
      ...base,
      state: "completed",
      verdict: report.verdict,
      started_at: report.started_at,
      report,
      recording,
      trace,
      regression: regression ?? null,
    };
  }
  if (job.error !== null) {
    return {
      ...base,
      state: "failed",
      error: job.error,
      note:
        `the run stopped without a completed report; its checkpoint lists the synthetic ids it issued: remove them with trace external-cleanup ${job.runId} before rerunning`,
    };
  }
  return { ...base, progress: structuredClone(job.progress) };
}

function locatedView(located: LocatedRun): RunJobView {
  if (located.found === "checkpoint") {
    const { checkpoint, running } = located;
    if (checkpoint.state === "completed") {
      // Completed, yet neither the ledger nor a kept report has it: lost.
      return {
        ...emptyView(checkpoint.run_id, checkpoint.target.id),
        regression_id: checkpoint.regression_id,
        state: "completed",
        verdict: checkpoint.verdict ?? "INCONCLUSIVE",
        started_at: checkpoint.started_at,
        note: lostNote(checkpoint.run_id, checkpoint.verdict),
      };
    }
    return {
      ...emptyView(checkpoint.run_id, checkpoint.target.id),
      regression_id: checkpoint.regression_id,
      state: running ? "running" : "interrupted",
      verdict: running ? null : "INCONCLUSIVE",
      started_at: checkpoint.started_at,
      note: running
        ? `process ${checkpoint.pid} is running this run; poll it again later`
        : `the run stopped before a completed report was kept; ${
          checkpoint.issued.test.length + checkpoint.issued.control.length
        } synthetic id(s) may remain in namespaces ${checkpoint.namespaces.test} and ${checkpoint.namespaces.control}`,
    };
  }
  const { report } = located;
  return {
    ...emptyView(report.run_id, report.target.id),
    state: "completed",
    verdict: report.verdict,
    regression_id: located.found === "ledger" ? located.regressionId : null,
    started_at: report.started_at,
    report,
    recording: located.found === "ledger"
      ? { kept_in: "ledger" }
      : { kept_in: "file", path: located.path, reason: "not in the ledger" },
    ...(located.found === "kept" ? { note: keptNote(located.path) } : {}),
  };
}
