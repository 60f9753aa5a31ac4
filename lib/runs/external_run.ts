/**
 * An external run end to end: strict HTTP transport, checkpoint file under
 * the data directory, the engine, and the completed report appended to the
 * ledger. CLI, MCP and the UI all start runs through here.
 *
 * @module
 */

import type { StagingConfig } from "../contract/config.ts";
import type { StagingTransport } from "../contract/protocol.ts";
import { digestOf } from "../canonical_json.ts";
import type { TraceDb } from "../db.ts";
import { createHttpTransport } from "../http/strict_client.ts";
import { errorMessage } from "../errors.ts";
import { type LinkedEntries, recordRun } from "../ledger/runs.ts";
import { join } from "node:path";
import { checkpointDir, fileCheckpointSink } from "../runner/checkpoint.ts";
import type { Clock } from "../runner/clock.ts";
import { runDeletionContract } from "../runner/engine.ts";
import type { RunEventListener } from "../runner/events.ts";
import { newRunIdentifiers } from "../runner/ids.ts";
import type { RunReport, TargetRef } from "../runner/report.ts";
import { createRunTraceSink } from "./trace_events.ts";

/** Options for {@link runExternal}. */
export interface ExternalRunOptions {
  db: TraceDb;
  dataDir: string;
  target: TargetRef;
  /** Defaults to the strict HTTP transport for `config`. */
  transport?: StagingTransport;
  /** Environment lookup for `token_env`. */
  env?: (name: string) => string | undefined;
  signal?: AbortSignal;
  onEvent?: RunEventListener;
  /** Called once the run id and checkpoint path exist, before any request. */
  onStart?: (started: { runId: string; checkpointPath: string }) => void;
  /** Entries appended in the same transaction as the report (a replay's link). */
  linked?: LinkedEntries;
  /** Time source (tests); the system clock by default. */
  clock?: Clock;
  /** Write the run's lifecycle into the observability index (default true). */
  trace?: boolean;
  /** Receives non-fatal problems, e.g. trace events that could not be written. */
  onWarning?: (message: string) => void;
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
 * Appends the report to the ledger. If that fails (a locked or unreachable
 * database), the completed report is kept beside its checkpoint instead of
 * being lost, and the caller is told where.
 */
async function recordOrKeep(
  report: RunReport,
  options: ExternalRunOptions,
): Promise<void> {
  try {
    await recordRun(options.db, report, options.linked);
  } catch (error) {
    const path = join(
      checkpointDir(options.dataDir),
      `${report.run_id}.report.json`,
    );
    await Deno.writeTextFile(path, JSON.stringify(report, null, 2) + "\n", {
      mode: 0o600,
    });
    options.onWarning?.(
      `Cannot record run ${report.run_id} in the ledger (${
        errorMessage(error)
      }); its completed report is kept at ${path}`,
    );
  }
}

/** The id a config-only run is filed under: stable for the same config. */
export function configTargetId(config: StagingConfig): string {
  const digest = digestOf(config);
  return `cfg-${digest.slice("sha256:".length, "sha256:".length + 12)}`;
}

/** Runs the contract against an external target and records the completed report. */
export async function runExternal(
  config: StagingConfig,
  options: ExternalRunOptions,
): Promise<RunReport> {
  const transport = options.transport ??
    createHttpTransport(config, options.env ? { env: options.env } : {});
  const identifiers = newRunIdentifiers(config.document_count);
  const checkpoint = fileCheckpointSink(options.dataDir, identifiers.runId);
  options.onStart?.({
    runId: identifiers.runId,
    checkpointPath: checkpoint.location,
  });
  const sink = options.trace === false ? null : createRunTraceSink(options.db, {
    runId: identifiers.runId,
    runKind: "external",
    targetId: options.target.id,
    namespaces: {
      test: identifiers.testNamespace,
      control: identifiers.controlNamespace,
    },
    ...(options.clock ? { clock: options.clock } : {}),
  });
  const onEvent = combineListeners(options.onEvent, sink?.listener);
  try {
    const report = await runDeletionContract(config, {
      transport,
      target: options.target,
      checkpoint,
      identifiers,
      kind: "external",
      ...(options.signal ? { signal: options.signal } : {}),
      ...(onEvent ? { onEvent } : {}),
      ...(options.clock ? { clock: options.clock } : {}),
    });
    await recordOrKeep(report, options);
    // Trace events explain a run; failing to write them must not lose its verdict.
    await sink?.flush().catch((error: unknown) =>
      options.onWarning?.(
        `Cannot write the run's trace events: ${errorMessage(error)}`,
      )
    );
    return report;
  } finally {
    await transport.close?.();
  }
}
