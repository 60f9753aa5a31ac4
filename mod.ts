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
 * @example Forget a user: dry run, then apply with the printed confirmation
 * ```ts
 * import { eraseSubject, erasureKey, openDb, parseErasureSubject, planSubjectErasure } from "./mod.ts";
 *
 * const db = await openDb({ dataDir: "./.trace" });
 * const key = await erasureKey("./.trace");
 * const subject = parseErasureSubject({ application_id: "app-1", user_id: "u-42" });
 * const plan = await planSubjectErasure(db, subject, { key });
 * const { receipt } = await eraseSubject(db, subject, plan.confirmation, { key });
 * console.log(receipt.receipt.receipt_id, receipt.head);
 * ```
 *
 * @example Mount the trace UI in a host program, with operator accounts and host hooks
 * ```ts
 * import { AccountBook, ALL_MIGRATIONS, createApp, migrate, openDb } from "./mod.ts";
 *
 * const db = await openDb({ dataDir: "./.trace" });
 * await migrate(db, ALL_MIGRATIONS);
 * const accounts = new AccountBook({
 *   "support-1": { token: Deno.env.get("SUPPORT_TOKEN")!, role: "analyst", application_id: "app-1" },
 * });
 * const users = new Map([["ada@example.com", "user-17"]]);
 * const app = createApp({
 *   db,
 *   accounts, // accounts.replace({...}) later takes effect on the next request
 *   identityResolver: ({ email }) => {
 *     const user_id = users.get(email);
 *     if (!user_id) throw new Error("no such account");
 *     return { user_id, application_id: "app-1" };
 *   },
 *   artifactResolver: () => ({ ownership_verified: true, exists: true }),
 *   resourceAuthorizer: ({ tenant }) => tenant.application_id === "app-1",
 * });
 * Deno.serve({ hostname: "127.0.0.1", port: 8788 }, app.fetch);
 * ```
 *
 * @example Serve the demo's memory pipeline with a defect preset, in process
 * ```ts
 * import { demoBehaviour, handleStagingRequest, MemoryPipeline } from "./mod.ts";
 *
 * // A behaviour is plain data: the stale-cache preset never drops cached answers.
 * const pipeline = new MemoryPipeline(demoBehaviour("stale-cache"));
 * await handleStagingRequest(pipeline, "ingest", { namespace: "t-1", id: "d1", text: "hello" });
 * const { response } = await handleStagingRequest(pipeline, "inventory", { namespace: "t-1" });
 * console.log(response.source_records); // 1
 * pipeline.close();
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
  type Inventory,
  type Operation,
  type OperationRequests,
  type OperationResponses,
  OPERATIONS,
  parseRequest,
  PROTOCOL_REVISION,
  REQUEST_SCHEMAS,
  type RequestFailure,
  type RequestOptions,
  RESPONSE_SCHEMAS,
  StagingRequestError,
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
  initializeObs,
  listCoverageProfiles,
  registerCoverageProfile,
  type TraceEvent,
} from "./lib/obs/mod.ts";
export {
  createRecorder,
  ingestEvents,
  type Recorder,
  recorderForWorker,
} from "./lib/obs/ingest/mod.ts";
export {
  exportEvents,
  queryTraceEvents,
  summarizeTraceEvents,
  type TraceEventPage,
  type TraceQuery,
} from "./lib/obs/query/mod.ts";
export {
  applyExpiry,
  backfill,
  directoryArchive,
  obsHealth,
  parity,
  parseExpiryPlan,
  planExpiry,
  readRecordedParity,
  retention,
  retentionPolicy,
} from "./lib/obs/maint/mod.ts";
export { createRunTraceSink, type RunTraceSink } from "./lib/runs/mod.ts";

// Trace forgets too: subject erasure, receipts, propagation, the self-contract adapter
export {
  erasureKey,
  type ErasureParticipant,
  type ErasurePlan,
  type ErasureResult,
  type ErasureSubject,
  type ErasureSubjectInput,
  type ErasureTarget,
  parseErasureSubject,
  registerErasureParticipant,
  setErasurePropagation,
} from "./lib/obs/maint/mod.ts";
export {
  type AppliedErasure,
  enableErasurePropagation,
  eraseSubject,
  type ErasureVerification,
  planSubjectErasure,
  type PropagationOptions,
  verifyErasure,
} from "./lib/runs/mod.ts";
export {
  type ErasureReceipt,
  listReceipts,
  readReceipt,
} from "./lib/ledger/erasure_receipts.ts";
export {
  createSelfStagingAdapter,
  SELF_STAGING_APPLICATION,
  type SelfStagingAdapter,
} from "./lib/obs/self_contract/mod.ts";
export { handlerTransport } from "./lib/reference/transport.ts";

// MCP tools (any transport of the SDK)
export {
  createTraceMcpServer,
  localPrincipal,
  type McpPrincipal,
  type McpToolContext,
  registerTraceTools,
  TOOL_NAMES,
  type TraceScope,
} from "./lib/mcp/mod.ts";

// Reference suite
export { REFERENCE_SYSTEMS } from "./lib/reference/systems.ts";
export {
  runReferenceSuite,
  runReferenceSystem,
} from "./lib/reference/suite.ts";

// Memory pipeline (behind the demo and the reference systems), demo presets, staging app
export {
  type Clock as SchedulerClock,
  CORRECT_BEHAVIOUR,
  type DeleteSummary,
  handleStagingRequest,
  ManualScheduler,
  type MemoryActivity,
  type MemoryBehaviour,
  MemoryPipeline,
  type MemoryPipelineOptions,
  type QueryResult,
  type RepairReindex,
  type Scheduler,
  type StagingExchange,
  type StoredCounts,
  systemScheduler,
  type TimerId,
  type VectorCandidate,
} from "./lib/memory/mod.ts";
export {
  DEFECT_INFO,
  type DefectInfo,
  DEFECTS,
  demoBehaviour,
  type DemoDefect,
  type ExpectedVerdict,
  HEALTHY,
} from "./lib/demo/defects.ts";
export {
  createStagingApp,
  type StagingAppEnv,
  type StagingAppOptions,
} from "./routes/staging.ts";
export { type AppOptions, createApp } from "./routes/app.ts";
export {
  createOneTimeLogin,
  type LoginTokenCheck,
  type OneTimeLogin,
} from "./routes/one_time_login.ts";

// Operator security: accounts and roles, host hooks, the audit trail, replay drafts
export {
  AccountBook,
  type AccountsConfig,
  type Action,
  ACTIONS,
  type ArtifactRequest,
  type ArtifactResolver,
  type ArtifactState,
  type AuditEntry,
  type AuditListOptions,
  type AuditVerification,
  type AuthorizationRequest,
  can,
  type Capabilities,
  describeCapabilities,
  type HostHooks,
  type IdentityRequest,
  type IdentityResolution,
  type IdentityResolver,
  listAudit,
  listDrafts,
  narrowScope,
  parseAccounts,
  type Principal,
  type ReplayDraft,
  type ReplayPlan,
  type ResourceAuthorizer,
  type ResourceRef as HostResourceRef,
  type Role,
  ROLES,
  type TenantScope,
  verifyAudit,
} from "./lib/auth/mod.ts";
