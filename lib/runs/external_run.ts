/**
 * An external run end to end: the process's run lock, the strict HTTP
 * transport, the checkpoint file under the data directory, the engine, the
 * run's trace events, and the completed report appended to the ledger (or
 * kept beside its checkpoint when the ledger cannot take it). CLI, job
 * manager and library callers all start runs through here, and
 * get back what happened.
 *
 * @module
 */

import { join } from "node:path";
import type { StagingConfig } from "../contract/config.ts";
import type { StagingTransport } from "../contract/protocol.ts";
import { digestOf } from "../canonical_json.ts";
import type { TraceDb } from "../db.ts";
import { errorMessage } from "../errors.ts";
import { fileProblem } from "../file_errors.ts";
import { targetTransport } from "./target_transport.ts";
import type { LedgerHead } from "../ledger/head.ts";
import { type LinkedEntries, recordRun } from "../ledger/runs.ts";
import { CONFIG_TARGET_PREFIX } from "../ledger/targets.ts";
import {
  checkpointDir,
  type CheckpointSink,
  fileCheckpointSink,
} from "../runner/checkpoint.ts";
import type { Clock } from "../runner/clock.ts";
import { runDeletionContract } from "../runner/engine.ts";
import type { RunEventListener } from "../runner/events.ts";
import { newRunIdentifiers } from "../runner/ids.ts";
import type { RunReport, TargetRef } from "../runner/report.ts";
import { checkAdapterReachable, RunNotStartedError } from "./reachability.ts";
import { PROCESS_RUN_LOCK, type RunLock } from "./run_lock.ts";
import { traceRun, type TraceWrite } from "./run_traces.ts";
import { writeFileWhole } from "./write_file.ts";

/** Options for {@link runExternal}. */
export interface ExternalRunOptions {
  /** The database holding the ledger (and the index, for the trace). */
  db: TraceDb;
  /** The data directory; checkpoints go to its `external/`. */
  dataDir: string;
  /** The target the report names. */
  target: TargetRef;
  /** Defaults to the strict HTTP transport for `config`; closed after the run. */
  transport?: StagingTransport;
  /** Environment lookup for `token_env`. */
  env?: (name: string) => string | undefined;
  /** Aborting ends the window early (INCONCLUSIVE); cleanup still runs. */
  signal?: AbortSignal;
  /** Receives every lifecycle event (progress). */
  onEvent?: RunEventListener;
  /** Called once the checkpoint file exists, before any request. */
  onStart?: (started: { runId: string; checkpointPath: string }) => void;
  /**
   * Entries appended in the same transaction as the report (a replay's
   * link). Trace's own replay uses it; not part of the library surface (it
   * hands out a libSQL transaction).
   *
   * @ignore
   */
  linked?: LinkedEntries;
  /**
   * The saved regression this run replays, named in its checkpoint so that
   * a replay that never completes still counts as its latest. Trace's own
   * replay sets it with `linked`.
   *
   * @ignore
   */
  regressionId?: string;
  /** Time source (tests); the system clock by default. */
  clock?: Clock;
  /** Write the run's lifecycle into the observability index (default true). */
  trace?: boolean;
  /** The lock that allows one external run at a time (default: the process's). */
  lock?: RunLock;
}

/** Where a completed report was kept. */
export type RunRecording =
  | {
    kept_in: "ledger";
    /** The ledger's head right after the report and its linked entries (absent when read back later). */
    head?: LedgerHead;
  }
  | {
    kept_in: "file";
    path: string;
    /** Why the ledger did not take it. */
    reason: string;
  }
  | {
    /** Neither the ledger nor the fallback file took it: only the caller has it now. */
    kept_in: "nowhere";
    /** Why neither took it. */
    reason: string;
  };

/** What an external run did: its report, where the report is kept, and its trace. */
export interface ExternalRunOutcome {
  /** The completed report. */
  report: RunReport;
  /** Whether the report went to the ledger or to a file. */
  recording: RunRecording;
  /** What became of the run's trace events. */
  trace: TraceWrite;
}

/** The id a config-only run is filed under: stable for the same config. */
export function configTargetId(config: StagingConfig): string {
  const digest = digestOf(config);
  return `${CONFIG_TARGET_PREFIX}${
    digest.slice("sha256:".length, "sha256:".length + 12)
  }`;
}

/** Runs the contract against an external target and records the completed report. */
export async function runExternal(
  config: StagingConfig,
  options: ExternalRunOptions,
): Promise<ExternalRunOutcome> {
  const identifiers = newRunIdentifiers(config.document_count);
  const release = (options.lock ?? PROCESS_RUN_LOCK).acquire(
    identifiers.runId,
  );
  let transport: StagingTransport | undefined;
  try {
    transport = options.transport ??
      targetTransport(config, options.target, options.env);
    // A target named by id runs its stored config, which cannot be edited.
    await checkAdapterReachable(config, transport, {
      ...(options.target.source === "registered"
        ? { registeredTarget: options.target.id }
        : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    // A stop during the probe is one before the run: no checkpoint, no
    // ledger entry, rather than an empty interrupted run on record.
    if (options.signal?.aborted) throw new RunNotStartedError();
    const checkpoint = announcing(
      fileCheckpointSink(options.dataDir, identifiers.runId),
      (checkpointPath) =>
        options.onStart?.({ runId: identifiers.runId, checkpointPath }),
    );
    const tracer = traceRun(options.db, {
      enabled: options.trace !== false,
      runId: identifiers.runId,
      runKind: "external",
      targetId: options.target.id,
      namespaces: {
        test: identifiers.testNamespace,
        control: identifiers.controlNamespace,
      },
      ...(options.clock ? { clock: options.clock } : {}),
    });
    const onEvent = combineListeners(options.onEvent, tracer.listener);
    const report = await runDeletionContract(config, {
      transport,
      target: options.target,
      checkpoint,
      identifiers,
      kind: "external",
      ...(options.signal ? { signal: options.signal } : {}),
      ...(onEvent ? { onEvent } : {}),
      ...(options.clock ? { clock: options.clock } : {}),
      ...(options.regressionId === undefined
        ? {}
        : { regressionId: options.regressionId }),
    });
    const recording = await recordOrKeep(report, options);
    // Trace events explain a run; failing to write them must not lose its verdict.
    return { report, recording, trace: await tracer.finish() };
  } finally {
    release();
    await transport?.close?.();
  }
}

/** Calls `onFirstWrite` once the first checkpoint is durably on disk. */
function announcing(
  sink: CheckpointSink,
  onFirstWrite: (location: string) => void,
): CheckpointSink {
  let announced = false;
  return {
    location: sink.location,
    async write(checkpoint) {
      await sink.write(checkpoint);
      if (announced) return;
      announced = true;
      onFirstWrite(sink.location);
    },
  };
}

function combineListeners(
  ...listeners: (RunEventListener | undefined)[]
): RunEventListener | undefined {
  const present = listeners.filter((l): l is RunEventListener =>
    l !== undefined
  );
  if (present.length <= 1) return present[0];
  return (event) => present.forEach((listener) => listener(event));
}

/**
 * Appends the report to the ledger. If that fails (a locked, full or broken
 * database), the completed report is kept beside its checkpoint instead; if
 * that fails too (a full disk), no partial file is left and the outcome says
 * that the caller holds the only copy.
 */
async function recordOrKeep(
  report: RunReport,
  options: ExternalRunOptions,
): Promise<RunRecording> {
  let reason: string;
  try {
    const { head } = await recordRun(options.db, report, options.linked);
    return { kept_in: "ledger", head };
  } catch (error) {
    reason = errorMessage(error);
  }
  const path = keptReportPath(options.dataDir, report.run_id);
  try {
    await writeFileWhole(path, JSON.stringify(report, null, 2) + "\n");
    return { kept_in: "file", path, reason };
  } catch (error) {
    return {
      kept_in: "nowhere",
      reason: `${reason}; and ${path}: ${fileProblem(error, "write")}`,
    };
  }
}

/** Where a completed report the ledger could not take is kept. */
export function keptReportPath(dataDir: string, runId: string): string {
  return join(checkpointDir(dataDir), `${runId}.report.json`);
}
