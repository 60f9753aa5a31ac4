/**
 * Trace as a library: run the deletion contract against a staging adapter,
 * keep the ledger, record and query agent-memory trace events, and serve the
 * API. Each area is also an entry of its own: `@trace/trace/contract`,
 * `@trace/trace/runs`, `@trace/trace/ledger`, `@trace/trace/obs` and
 * `@trace/trace/server`; this module holds them all, plus the typed errors,
 * strict JSON, the MCP tools, the reference suite and the memory pipeline.
 *
 * @example Run the deletion contract against a staging adapter
 * ```ts
 * import { migrate, openDb, parseStagingConfig, runExternal, ALL_MIGRATIONS } from "@trace/trace";
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
 * import { createRecorder, initializeObs, openDb } from "@trace/trace";
 *
 * const db = await openDb({ dataDir: "./.trace" });
 * await initializeObs(db);
 * const recorder = createRecorder(db, { application_id: "app-1", agent_id: "support-bot" });
 * await recorder.record({ kind: "memory_search", thread_id: "t-1" });
 * ```
 *
 * @example Forget a user: dry run, then apply with the printed confirmation
 * ```ts
 * import { eraseSubject, erasureKeyFor, openDb, parseErasureSubject, planSubjectErasure } from "@trace/trace";
 *
 * const db = await openDb({ dataDir: "./.trace" });
 * const key = await erasureKeyFor(db, "./.trace");
 * const subject = parseErasureSubject({ application_id: "app-1", user_id: "u-42" });
 * const plan = await planSubjectErasure(db, subject, { key });
 * const { receipt } = await eraseSubject(db, subject, plan.confirmation, { key });
 * console.log(receipt.receipt.receipt_id, receipt.head);
 * ```
 *
 * @example Mount the trace UI in a host program, with operator accounts and host hooks
 * ```ts
 * import { AccountBook, ALL_MIGRATIONS, createApp, migrate, openDb } from "@trace/trace";
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
 * import { demoBehaviour, handleStagingRequest, MemoryPipeline } from "@trace/trace";
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

// The areas, each also an entry of its own (deno.json `exports`)
export * from "./contract.ts";
export * from "./runs.ts";
export * from "./ledger.ts";
export * from "./obs.ts";
export * from "./server.ts";

// Errors
export {
  ConfigError,
  ConflictError,
  type ErrorCode,
  LedgerIntegrityError,
  NotFoundError,
  RefusedError,
  StorageError,
  TokenEnvUnsetError,
  TraceError,
  UsageError,
} from "./lib/errors.ts";
export { AuditIntegrityError } from "./lib/auth/audit_integrity.ts";
export { DatabaseBusyError } from "./lib/db.ts";

// Strict JSON, as Trace reads configs and adapter answers
export {
  type JsonBudget,
  jsonBudget,
  parseJsonObject,
  parseStrictJson,
  STRICT_JSON_ERROR_CODE,
  STRICT_JSON_REASONS,
  StrictJsonError,
  type StrictJsonOptions,
  type StrictJsonReason,
} from "./lib/json/strict_json.ts";

// MCP tools (any transport of the SDK)
export {
  createTraceMcpServer,
  localPrincipal,
  type McpPrincipal,
  type McpToolContext,
  OPERATOR_ROLES,
  type OperatorRole,
  registerTraceTools,
  TOOL_NAMES,
  ToolCalls,
  type TraceScope,
} from "./lib/mcp/mod.ts";
export type { ToolIdentity } from "./lib/mcp/context.ts";

// Reference suite: systems with known deletion behaviour, run in process
export {
  type Expectation,
  type OwnTransportInstance,
  type OwnTransportSystemSpec,
  type PipelineSystemSpec,
  type Qualifier,
  QUALIFIERS,
  REFERENCE_SYSTEMS,
  type ReferenceInstance,
  type ReferenceSystemFields,
  type ReferenceSystemSpec,
  type ReferenceTiming,
  type ScenarioHooks,
} from "./lib/reference/systems.ts";
export {
  type ReferenceResult,
  type ReferenceRunOptions,
  type ReferenceSuiteOptions,
  runReferenceSuite,
  runReferenceSystem,
} from "./lib/reference/suite.ts";
export type { Evaluation } from "./lib/reference/evaluate.ts";
export { VirtualTime } from "./lib/reference/virtual_time.ts";
export {
  type RecordedReferenceRun,
  runReference,
  type RunReferenceOptions,
} from "./lib/runs/mod.ts";

// Memory pipeline (behind the demo and the reference systems), demo presets, staging app
export {
  ANSWER_RENDERINGS,
  type AnswerRendering,
  type Clock as SchedulerClock,
  CORRECT_BEHAVIOUR,
  DEFAULT_MEMORY_LIMITS,
  type DeleteSummary,
  handleStagingRequest,
  ManualScheduler,
  type MemoryActivity,
  type MemoryBehaviour,
  MemoryFullError,
  type MemoryLimits,
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
export type { ReferencePipeline } from "./lib/memory/pipeline.ts";
export {
  DEFECT_INFO,
  type DefectInfo,
  DEFECTS,
  demoBehaviour,
  type DemoDefect,
  type ExpectedVerdict,
  HEALTHY,
} from "./lib/demo/defects.ts";
export { createStagingApp } from "./routes/server_app.ts";
export type { StagingAppOptions } from "./routes/staging.ts";
