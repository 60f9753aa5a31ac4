/**
 * The use cases the `trace` command, the server and the MCP tools call: run
 * the deletion contract against a registered target or a config and record
 * it, replay a saved regression, show, save and compare runs, write a run's
 * trace events, and start runs in the background one at a time per process
 * (`RunJobs`). Each returns what happened, including where it was recorded.
 *
 * @example Run the contract against a staging adapter and record it
 * ```ts
 * import { parseStagingConfig } from "@trace/trace/contract";
 * import { ALL_MIGRATIONS, migrate, openDb, runExternal } from "@trace/trace/runs";
 *
 * const config = parseStagingConfig({
 *   base_url: "http://127.0.0.1:8787",
 *   environment: "staging",
 *   allow_synthetic_writes: true,
 * });
 * const db = await openDb({ dataDir: "./.trace" });
 * await migrate(db, ALL_MIGRATIONS);
 * const { report, recording } = await runExternal(config, {
 *   db,
 *   dataDir: "./.trace",
 *   target: { id: "local", base_url: config.base_url, source: "config" },
 * });
 * console.log(report.verdict, recording.kept_in);
 * db.close();
 * ```
 *
 * @module
 */

export {
  migrate,
  type Migration,
  openDb,
  type OpenDbOptions,
  type TraceDb,
} from "./lib/db.ts";
export { ALL_MIGRATIONS } from "./lib/migrations.ts";
export { type DataDirOptions, resolveDataDir } from "./lib/data_dir.ts";
export {
  compareStoredRuns,
  configTargetId,
  createRunTraceSink,
  type ExternalRunOptions,
  type ExternalRunOutcome,
  type JobProgress,
  type JobRequest,
  type JobState,
  type ReplayOptions,
  type ReplayOutcome,
  replayRegression,
  RunBusyError,
  runExternal,
  runExternalTarget,
  RunJobs,
  type RunJobsOptions,
  type RunJobView,
  RunLock,
  type RunRecording,
  type RunSelection,
  type RunTraceIdentity,
  type RunTraceSink,
  type RunTraceSinkOptions,
  type RunView,
  saveRun,
  type SaveRunOptions,
  type StartedJob,
  type TargetRunOptions,
  type TargetRunOutcome,
  type TraceWrite,
  viewRun,
  type ViewRunOptions,
} from "./lib/runs/mod.ts";

// What the use cases take and return, defined with the contract and the ledger
export {
  type Baseline,
  type Checkpoint,
  type CheckpointSink,
  type Cleanup,
  type CleanupDelete,
  type Clock,
  type ControlState,
  type DeletionRecord,
  ERROR_CODES,
  type ErrorCode,
  type Finding,
  type FindingSeverity,
  type Inventory,
  type MarkerForm,
  type MarkerPlace,
  type Operation,
  OPERATIONS,
  RENDERING_TRAITS,
  type RenderingTrait,
  REPORT_SCHEMA,
  REQUEST_FAILURES,
  type RequestErrorRecord,
  type RequestFailure,
  type RequestOptions,
  type RunEvent,
  type RunEventListener,
  type RunMarkers,
  type RunPhase,
  type RunReport,
  type RunState,
  type Sample,
  type StagingConfig,
  type StagingTimeouts,
  type StagingTransport,
  type TargetRef,
  type Timing,
  TraceError,
  type Verdict,
  VERDICTS,
} from "./contract.ts";
export { ConflictError } from "./lib/errors.ts";
export type { LedgerHead } from "./lib/ledger/head.ts";
export {
  type CleanupStatus,
  type ComparedCleanup,
  type ComparedRun,
  type DeletionCounts,
  type FindingKey,
  type LaterCleanup,
  type PinnedAssertion,
  REGRESSION_STATUSES,
  type RegressionDefinition,
  type RegressionStatus,
  type RegressionView,
  type RunComparison,
  type RunContract,
  type SavedRegression,
  type TargetSource,
} from "./ledger.ts";
export type { IngestItemResult, IngestResult } from "./lib/obs/ingest/mod.ts";
