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
import { type LinkedEntries, recordRun } from "../ledger/runs.ts";
import { fileCheckpointSink } from "./checkpoint.ts";
import type { Clock } from "./clock.ts";
import { runDeletionContract } from "./engine.ts";
import type { RunEventListener } from "./events.ts";
import { newRunIdentifiers } from "./ids.ts";
import type { RunReport, TargetRef } from "./report.ts";

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
  try {
    const report = await runDeletionContract(config, {
      transport,
      target: options.target,
      checkpoint,
      identifiers,
      kind: "external",
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.onEvent ? { onEvent: options.onEvent } : {}),
      ...(options.clock ? { clock: options.clock } : {}),
    });
    await recordRun(options.db, report, options.linked);
    return report;
  } finally {
    await transport.close?.();
  }
}
