/**
 * Trace as a library: run the deletion contract against a staging adapter,
 * keep the ledger, record and query agent-memory trace events, and serve the
 * API.
 *
 * @example Run the deletion contract against a staging adapter
 * ```ts
 * import { migrate, openDb, parseStagingConfig, runExternal, ALL_MIGRATIONS } from "./mod.ts";
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
 * ```
 *
 * @example Record what an agent retrieved and selected
 * ```ts
 * import { createRecorder, initializeObs, openDb } from "./mod.ts";
 *
 * const db = await openDb({ dataDir: "./.trace" });
 * await initializeObs(db);
 * const recorder = createRecorder(db, { application_id: "app-1", agent_id: "support-bot" });
 * await recorder.record({ kind: "memory_search", thread_id: "t-1" });
 * ```
 *
 * @module
 */

// Errors
export {
  ConfigError,
  ConflictError,
  LedgerIntegrityError,
  NotFoundError,
  RefusedError,
  StorageError,
  TraceError,
  UsageError,
} from "./lib/errors.ts";
export { ProtocolError } from "./lib/contract/protocol.ts";

// Storage
export { migrate, openDb, type OpenDbOptions, type TraceDb } from "./lib/db.ts";
export { ALL_MIGRATIONS } from "./lib/migrations.ts";
export { resolveDataDir } from "./lib/data_dir.ts";

// The staging adapter contract and the deletion contract runner
export {
  parseStagingConfig,
  parseStagingConfigText,
  type StagingConfig,
} from "./lib/contract/config.ts";
export {
  type Operation,
  OPERATIONS,
  PROTOCOL_REVISION,
  type StagingTransport,
  STORES,
} from "./lib/contract/protocol.ts";
export {
  createHttpTransport,
  type HttpTransportOptions,
} from "./lib/http/strict_client.ts";
export {
  parseJsonObject,
  parseStrictJson,
  StrictJsonError,
} from "./lib/json/strict_json.ts";
export { runDeletionContract, type RunOptions } from "./lib/runner/engine.ts";
export { planRun, type RunPlan } from "./lib/runner/plan.ts";
export type { RunEvent, RunEventListener } from "./lib/runner/events.ts";
export type {
  Finding,
  RunReport,
  Sample,
  TargetRef,
  Verdict,
} from "./lib/runner/report.ts";

// Runs: the use cases the CLI and the server call
export {
  compareStoredRuns,
  configTargetId,
  type ExternalRunOptions,
  type ExternalRunOutcome,
  type JobProgress,
  type JobRequest,
  type JobState,
  type RecordedReferenceRun,
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
  runReference,
  type RunReferenceOptions,
  type RunSelection,
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

// Ledger
export { registerTarget } from "./lib/ledger/targets.ts";
export {
  gateRegressions,
  listRegressions,
  type RegressionView,
  type SavedRegression,
  saveRegression,
} from "./lib/ledger/regressions.ts";
export { compareRuns, type RunComparison } from "./lib/ledger/compare.ts";
export { verifyLedger } from "./lib/ledger/verify.ts";

// Observability index
export {
  type EventInput,
  EventInputSchema,
  type TraceEvent,
} from "./lib/obs/model.ts";
export { initializeObs } from "./lib/obs/schema.ts";
export { ingestEvents } from "./lib/obs/ingest/ingest.ts";
export {
  createRecorder,
  type Recorder,
  recorderForWorker,
} from "./lib/obs/ingest/recorder.ts";
export {
  queryTraceEvents,
  type TraceEventPage,
  type TraceQuery,
} from "./lib/obs/query/query.ts";
export { summarizeTraceEvents } from "./lib/obs/query/summaries.ts";
export { exportEvents } from "./lib/obs/query/export.ts";
export {
  listCoverageProfiles,
  registerCoverageProfile,
} from "./lib/obs/coverage.ts";
export { backfill } from "./lib/obs/maint/backfill.ts";
export { parity, readRecordedParity } from "./lib/obs/maint/parity.ts";
export { retention, retentionPolicy } from "./lib/obs/maint/retention.ts";
export {
  applyExpiry,
  directoryArchive,
  parseExpiryPlan,
  planExpiry,
} from "./lib/obs/maint/expiry.ts";
export { obsHealth } from "./lib/obs/maint/health.ts";
export { createRunTraceSink, type RunTraceSink } from "./lib/runs/mod.ts";

// Reference suite
export { REFERENCE_SYSTEMS } from "./lib/reference/systems.ts";
export {
  runReferenceSuite,
  runReferenceSystem,
} from "./lib/reference/suite.ts";

// Demo staging app and server
export { DEFECT_INFO, DEFECTS, type DemoDefect } from "./lib/demo/defects.ts";
export { MemoryService } from "./lib/demo/memory_service.ts";
export { createStagingApp } from "./routes/staging.ts";
export { type AppOptions, createApp } from "./routes/app.ts";
