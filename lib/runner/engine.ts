/**
 * The deletion contract engine: ingest canaries and a control, establish the
 * baseline, delete, sample through the window, clean up, decide. The same
 * engine runs external targets (strict HTTP) and reference systems
 * (in-process transport).
 *
 * @module
 */

import type { StagingConfig } from "../contract/config.ts";
import {
  OPERATIONS,
  PROTOCOL_REVISION,
  type StagingTransport,
} from "../contract/protocol.ts";
import { digestOf } from "../canonical_json.ts";
import { type Checkpoint, type CheckpointSink } from "./checkpoint.ts";
import { type Clock, sleepUntil, systemClock } from "./clock.ts";
import { controlState } from "./control_state.ts";
import type { RunEvent, RunEventListener, RunPhase } from "./events.ts";
import {
  canaryText,
  controlText,
  newRunIdentifiers,
  type RunIdentifiers,
} from "./ids.ts";
import { assessRun } from "./findings.ts";
import type { FindingCode } from "./rules.ts";
import { errorMessage } from "../errors.ts";
import { processIdentity } from "./process_identity.ts";
import {
  type DeletionRecord,
  type InventoryCounts,
  REPORT_SCHEMA,
  type RequestErrorRecord,
  type RunReport,
  type Sample,
  type TargetRef,
} from "./report.ts";
import { requestDetail } from "./_request_errors.ts";
import { RunSession } from "./_session.ts";
import { establishBaseline, observe } from "./_observe.ts";
import { UnreadCountLog } from "./unread_counts.ts";
import {
  checkpointUnwritten,
  idNotPreserved,
  INGEST_FAILED,
} from "./baseline_problems.ts";
import {
  afterInterruptMs,
  cleanPollsNeeded,
  cleanUp,
  round,
  settleTimeMs,
} from "./_cleanup.ts";

/** Options for {@link runDeletionContract}. */
export interface RunOptions {
  /** How requests reach the adapter (strict HTTP, or in process). */
  transport: StagingTransport;
  /** The system under test, as the report names it. */
  target: TargetRef;
  /** Where the issued-id checkpoint is written before every ingest. */
  checkpoint: CheckpointSink;
  /** Recorded in the report (default `external`). */
  kind?: "external" | "reference";
  /** Time source (default the system clock); the reference suite runs on virtual time. */
  clock?: Clock;
  /** Fixed identifiers (tests); random by default. */
  identifiers?: RunIdentifiers;
  /**
   * Aborting stops the window early and goes to cleanup; the request in
   * flight, the search of a large answer under way and cleanup end within
   * the smaller of the window and 30 s of the abort, except that cleanup's
   * deletions and one last poll are still sent once it has passed, with 1 s
   * each (a large answer they bring is then not read). The report's state is `interrupted`
   * and its verdict INCONCLUSIVE.
   */
  signal?: AbortSignal;
  /** Receives every lifecycle event (progress, trace events). */
  onEvent?: RunEventListener;
  /** The saved regression this run replays, named in its checkpoint. */
  regressionId?: string;
}

/**
 * Runs the deletion contract against one target. Never throws for target
 * misbehaviour, interruption or a checkpoint that cannot be written: every
 * path ends in cleanup and a completed report.
 */
export async function runDeletionContract(
  config: StagingConfig,
  options: RunOptions,
): Promise<RunReport> {
  const clock = options.clock ?? systemClock;
  const ids = options.identifiers ??
    newRunIdentifiers(config.document_count, clock.wallNow());
  const emit = safeListener(options.onEvent);
  // Disposed on every way out: its search thread must not outlive the run.
  using session = new RunSession(options.transport, config, clock, emit);
  const unread = new UnreadCountLog();
  session.onAnswer = (op, role, answer) => {
    if (op === "inventory" && role === "test") unread.record(answer);
  };
  let current: RunPhase = "ingest";
  let interruptedDuring: RunPhase | null = null;
  const phase = (name: RunPhase) => {
    current = name;
    emit({ type: "phase", phase: name, at_ms: session.elapsedMs() });
  };
  const stillGoing = () => {
    if (options.signal?.aborted) interruptedDuring ??= current;
    return interruptedDuring === null;
  };
  const windowMs = config.deletion_window_seconds * 1000;
  const intervalMs = config.sample_interval_seconds * 1000;
  // Say at once what an interrupt stops and how long the run may still
  // take; by then the request in flight is called off and cleanup ends.
  const onAbort = () => {
    const boundMs = afterInterruptMs(windowMs);
    emit({
      type: "interrupted",
      phase: current,
      at_ms: session.elapsedMs(),
      bound_seconds: round(boundMs / 1000),
    });
    session.boundRequests(clock.now() + boundMs);
  };
  if (options.signal?.aborted) onAbort();
  else options.signal?.addEventListener("abort", onAbort, { once: true });
  const checkpoint = initialCheckpoint(config, options, ids, clock);
  const report = skeleton(config, options, ids, checkpoint);

  phase("ingest");
  const ingestProblem = await ingestAll(session, ids, config, {
    checkpoint,
    sink: options.checkpoint,
    clock,
    stillGoing,
  });
  if (ingestProblem === null && stillGoing()) {
    phase("baseline");
    report.baseline = await establishBaseline(
      session,
      ids,
      config.document_count,
    );
  } else if (ingestProblem !== null) {
    report.baseline.problems = [INGEST_FAILED + ingestProblem.text];
    if (ingestProblem.error) report.baseline.errors = [ingestProblem.error];
  }
  let windowEnded = false;
  if (report.baseline.ok && stillGoing()) {
    phase("delete");
    report.deletion = await deleteCanaries(session, ids);
    if (report.deletion.acknowledged) {
      phase("window");
      const cut = await sampleWindow(session, ids, report.samples, {
        windowMs,
        intervalMs,
        clock,
        emit,
        signal: options.signal,
        unread,
        baselineControl: report.baseline.control_inventory,
      });
      if (cut) interruptedDuring ??= "window";
      windowEnded = !cut;
    }
  }
  // An interrupt that only a request noticed (it was called off, and its
  // failure ended the phase) stops the run all the same: a request called
  // off is no evidence about the target.
  if (
    (options.signal?.aborted && !windowEnded) || session.cutShort > 0
  ) {
    interruptedDuring ??= current;
  }
  phase("cleanup");
  unread.readingAt({ phase: "cleanup" });
  report.cleanup = await cleanUp(session, ids, {
    issued: checkpoint.issued,
    windowMs,
    intervalMs,
    settleMs: settleTimeMs(report.samples),
    cleanPollsNeeded: cleanPollsNeeded(report.samples),
    unconfirmed: unconfirmedCanaries(report.baseline, ingestProblem, config),
    clock,
    signal: options.signal,
    emit,
  });
  options.signal?.removeEventListener("abort", onAbort);
  emit({ type: "cleanup", cleanup: report.cleanup });
  const assessment = assessRun({
    baseline: report.baseline,
    deletion: report.deletion,
    samples: report.samples,
    cleanup: report.cleanup,
    windowSeconds: config.deletion_window_seconds,
    intervalSeconds: config.sample_interval_seconds,
    interruptedDuring,
    unreadCounts: unread.seen(),
  });
  report.verdict = assessment.verdict;
  report.findings = assessment.findings;
  finish(report, session, clock, interruptedDuring !== null);
  await completeCheckpoint(report, checkpoint, options.checkpoint);
  for (const finding of report.findings) emit({ type: "finding", finding });
  phase("done");
  emit({ type: "verdict", verdict: report.verdict, run_id: report.run_id });
  return report;
}

function finish(
  report: RunReport,
  session: RunSession,
  clock: Clock,
  interrupted: boolean,
): void {
  // An interrupted window has no final sample: the report says so in its state.
  report.state = interrupted ? "interrupted" : "completed";
  report.finished_at = clock.wallNow().toISOString();
  report.requests = { total: session.total, failed: session.failed };
  report.timing.elapsed_seconds = round(session.elapsedMs() / 1000);
  // An interrupted window's last sample is not a final one.
  report.timing.final_sample_started_at_seconds = interrupted
    ? null
    : report.samples.at(-1)?.started_at_seconds ?? null;
}

/** Marks the checkpoint completed; a failure is noted, never fatal (the report is complete). */
async function completeCheckpoint(
  report: RunReport,
  checkpoint: Checkpoint,
  sink: CheckpointSink,
): Promise<void> {
  try {
    await sink.write({
      ...checkpoint,
      state: "completed",
      verdict: report.verdict,
      updated_at: report.finished_at ?? checkpoint.updated_at,
    });
  } catch (error) {
    report.findings.push({
      severity: "note",
      code: "checkpoint_unwritten" satisfies FindingCode,
      subject: "checkpoint",
      message:
        `The checkpoint ${sink.location} could not be marked completed: ${
          errorMessage(error)
        }`,
      sample_indexes: [],
    });
  }
}

function safeListener(
  listener: RunEventListener | undefined,
): RunEventListener {
  if (!listener) return () => {};
  return (event: RunEvent) => {
    try {
      listener(event);
    } catch {
      // A broken progress display or trace sink must never change a verdict.
    }
  };
}

function initialCheckpoint(
  config: StagingConfig,
  options: RunOptions,
  ids: RunIdentifiers,
  clock: Clock,
): Checkpoint {
  const now = clock.wallNow().toISOString();
  return {
    schema: "trace.checkpoint/1",
    run_id: ids.runId,
    state: "running",
    pid: Deno.pid,
    process_identity: processIdentity(Deno.pid),
    started_at: now,
    updated_at: now,
    target: options.target,
    regression_id: options.regressionId ?? null,
    config_digest: digestOf(config),
    namespaces: { test: ids.testNamespace, control: ids.controlNamespace },
    markers: { test: ids.marker, control: ids.controlMarker },
    issued: { test: [], control: [] },
    verdict: null,
  };
}

function skeleton(
  config: StagingConfig,
  options: RunOptions,
  ids: RunIdentifiers,
  checkpoint: Checkpoint,
): RunReport {
  return {
    schema: REPORT_SCHEMA,
    run_id: ids.runId,
    kind: options.kind ?? "external",
    verdict: "INCONCLUSIVE",
    state: "running",
    target: options.target,
    protocol: { revision: PROTOCOL_REVISION, operations: [...OPERATIONS] },
    config_digest: checkpoint.config_digest,
    started_at: checkpoint.started_at,
    finished_at: null,
    timing: {
      document_count: config.document_count,
      deletion_window_seconds: config.deletion_window_seconds,
      sample_interval_seconds: config.sample_interval_seconds,
      timeout_seconds: config.timeout_seconds,
      elapsed_seconds: 0,
      final_sample_started_at_seconds: null,
    },
    namespaces: checkpoint.namespaces,
    // A later cleanup queries these as the run's own cleanup does.
    markers: { test: ids.marker, control: ids.controlMarker },
    issued: checkpoint.issued,
    baseline: {
      ok: false,
      inventory: null,
      marker_seen: null,
      marker_form: null,
      control_inventory: null,
      control_seen: null,
      control_form: null,
      problems: [],
      errors: [],
    },
    deletion: null,
    samples: [],
    findings: [],
    cleanup: {
      cleanup_complete: false,
      deletes: [],
      polls: 0,
      limit_seconds: 0,
      interrupted: false,
      remaining: { test: null, control: null },
      marker_seen: { test: null, control: null },
      elapsed_seconds: 0,
      problems: [],
    },
    requests: { total: 0, failed: 0 },
  };
}

interface IngestContext {
  checkpoint: Checkpoint;
  sink: CheckpointSink;
  clock: Clock;
  /** False once the run was interrupted. */
  stillGoing: () => boolean;
}

/** Why ingest stopped: in words, with the request's error when a request failed. */
interface IngestProblem {
  text: string;
  error?: RequestErrorRecord;
}

/**
 * Checkpoints each id, then ingests it. Stops at the first failure (or
 * interruption) and returns why; null when every document landed. A
 * checkpoint that cannot be written stops ingest before the request is sent.
 */
async function ingestAll(
  session: RunSession,
  ids: RunIdentifiers,
  config: StagingConfig,
  context: IngestContext,
): Promise<IngestProblem | null> {
  const { checkpoint, sink, clock } = context;
  const documents = [
    ...ids.documentIds.map((id, i) => ({
      role: "test" as const,
      namespace: ids.testNamespace,
      id,
      text: canaryText(ids.marker, i, config.document_count),
    })),
    {
      role: "control" as const,
      namespace: ids.controlNamespace,
      id: ids.controlId,
      text: controlText(ids.controlMarker),
    },
  ];
  for (const doc of documents) {
    if (!context.stillGoing()) return null;
    checkpoint.issued[doc.role].push(doc.id);
    checkpoint.updated_at = clock.wallNow().toISOString();
    try {
      await sink.write(checkpoint);
    } catch (error) {
      checkpoint.issued[doc.role].pop();
      return { text: checkpointUnwritten(sink.location, errorMessage(error)) };
    }
    const attempt = await session.attempt("ingest", doc.role, {
      namespace: doc.namespace,
      id: doc.id,
      text: doc.text,
    });
    if (!attempt.ok) {
      return { text: requestDetail(attempt.error), error: attempt.error };
    }
    if (attempt.value.id !== doc.id) return { text: idNotPreserved(doc.id) };
  }
  return null;
}

async function deleteCanaries(
  session: RunSession,
  ids: RunIdentifiers,
): Promise<DeletionRecord> {
  const attempt = await session.attempt("delete", "test", {
    namespace: ids.testNamespace,
    ids: ids.documentIds,
  });
  return {
    acknowledged: attempt.ok,
    acknowledged_at_seconds: attempt.ok
      ? round(session.elapsedMs() / 1000)
      : null,
    error: attempt.ok ? null : attempt.error,
  };
}

interface WindowOptions {
  windowMs: number;
  intervalMs: number;
  clock: Clock;
  emit: RunEventListener;
  signal: AbortSignal | undefined;
  /** Told which sample the test inventory is read for. */
  unread: UnreadCountLog;
  /** The control inventory read before the deletion, which each sample's control is told against. */
  baselineControl: InventoryCounts | null;
}

/** Samples at once and every interval until a sample starts at or after the window; returns true if interrupted. */
async function sampleWindow(
  session: RunSession,
  ids: RunIdentifiers,
  samples: Sample[],
  options: WindowOptions,
): Promise<boolean> {
  const { clock, windowMs, intervalMs } = options;
  const origin = clock.now();
  for (let k = 0;; k++) {
    await sleepUntil(clock, origin + k * intervalMs, options.signal);
    if (options.signal?.aborted) return true;
    const startedMs = clock.now() - origin;
    options.unread.readingAt({ phase: "window", sample: samples.length });
    const observation = await observe(session, ids);
    const sample: Sample = {
      index: samples.length,
      started_at_seconds: round(startedMs / 1000),
      ended_at_seconds: round((clock.now() - origin) / 1000),
      ...observation,
    };
    samples.push(sample);
    options.emit({
      type: "sample",
      sample,
      window_seconds: windowMs / 1000,
      control: controlState(sample, options.baselineControl),
    });
    if (startedMs >= windowMs) return false;
  }
}

/**
 * Why a clean cleanup poll cannot show the synthetic records are gone, or
 * `null`. An acknowledged ingest has made its record visible (the adapter
 * contract), so a clean poll after it proves the deletion; but an ingest
 * that was not acknowledged may still land, and a baseline that counted
 * fewer records than were acknowledged shows an application that writes
 * later.
 */
function unconfirmedCanaries(
  baseline: RunReport["baseline"],
  ingestProblem: IngestProblem | null,
  config: StagingConfig,
): string | null {
  if (ingestProblem !== null) {
    return "an ingest was not acknowledged, so its write may still land";
  }
  const short = (counts: InventoryCounts | null, expected: number) =>
    counts !== null && counts.source_records < expected;
  return short(baseline.inventory, config.document_count) ||
      short(baseline.control_inventory, 1)
    ? "the baseline counted fewer synthetic records than were acknowledged, so some may land later"
    : null;
}
