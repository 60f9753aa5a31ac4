/**
 * The Trace server as a library: `createApp` builds the API, OTLP receiver,
 * trace UI and (when asked) MCP endpoint over one database, with the
 * server's security rules, operator accounts and roles, the audit trail and
 * the host hooks an embedding application supplies. It does not listen.
 *
 * @example Serve the trace UI with operator accounts and an identity hook
 * ```ts
 * import { AccountBook, ALL_MIGRATIONS, createApp, migrate, openDb } from "@trace/trace/server";
 *
 * const db = await openDb({ dataDir: "./.trace" });
 * await migrate(db, ALL_MIGRATIONS);
 * const accounts = new AccountBook({
 *   "support-1": { token: Deno.env.get("SUPPORT_TOKEN")!, role: "analyst", application_id: "app-1" },
 * });
 * const app = createApp({
 *   db,
 *   accounts,
 *   identityResolver: ({ email }) => ({ user_id: `user-${email.length}`, application_id: "app-1" }),
 * });
 * Deno.serve({ hostname: "127.0.0.1", port: 8788 }, app.fetch);
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
export type { AppOptions } from "./routes/app.ts";
export type { BodyLimits, ContentEncoding } from "./routes/_body.ts";
export type { ServerLog } from "./routes/_errors.ts";
export type { McpRouteOptions } from "./routes/mcp.ts";
export type { RunPagesOptions } from "./routes/pages.ts";
export type { ErasureAudit, ErasureAuditEntry } from "./routes/erasure.ts";
export { createApp, type ServerApp } from "./routes/server_app.ts";
export {
  createOneTimeLogin,
  type LoginTokenCheck,
  type OneTimeLogin,
} from "./routes/one_time_login.ts";
export {
  type AccessMode,
  AccountBook,
  type AccountsConfig,
  type AccountsOptions,
  type AccountSpec,
  type AccountsSource,
  type Action,
  type ActionCapability,
  ACTIONS,
  type ArtifactRequest,
  type ArtifactResolver,
  type ArtifactState,
  type AuditEntry,
  type AuditListOptions,
  type AuditVerification,
  type AuthMethod,
  type AuthorizationRequest,
  can,
  type Capabilities,
  type CapabilityContext,
  describeCapabilities,
  HOOK_NAMES,
  type HookAvailability,
  type HookName,
  type HostHooks,
  type IdentityRequest,
  type IdentityResolution,
  type IdentityResolver,
  listAudit,
  listDrafts,
  narrowScope,
  type OtherTokens,
  parseAccounts,
  type PlannedRef,
  type Principal,
  type ReplayDraft,
  type ReplayPlan,
  type ResourceAuthorizer,
  type ResourceRef as HostResourceRef,
  type Role,
  ROLES,
  type ScopeRequest,
  SUBJECT_KINDS as AUDIT_SUBJECT_KINDS,
  type SubjectKind as AuditSubjectKind,
  type TenantScope,
  type Unavailable,
  verifyAudit,
} from "./lib/auth/mod.ts";

// What the options and answers above hold, from the other areas
export {
  ALERT_SEVERITIES,
  type AlertSeverity,
  COUNTER_NAMES,
  type CounterName,
  type CounterReport,
  type ErasureKeyState,
  type ErasureSubject,
  EVENT_STORES,
  HEALTH_ALERT_CODES,
  HEALTH_STATUSES,
  type HealthAlert,
  type HealthAlertCode,
  HealthMonitor,
  type HealthMonitorOptions,
  type HealthStatus,
  type IndexReadiness,
  type InstrumentationVersions,
  type LinkCheck,
  type LinkCounts,
  type ObsHealth,
  type ObsHealthOptions,
  PARITY_STATUSES,
  type ParityStatus,
  type PreviewTruncation,
  type ProbeLatency,
  type ProbeTiming,
  type RecordedParity,
  type SelfStagingAdapter,
  type SelfStagingExchange,
  type SelfStoredCounts,
  type StoreName,
  SUBJECT_KINDS,
  type SubjectKind,
  type TableCounts,
} from "./obs.ts";
export {
  type Baseline,
  type Cleanup,
  type CleanupDelete,
  type ControlState,
  type DeletionRecord,
  type Finding,
  type FindingSeverity,
  type Inventory,
  type MarkerForm,
  type MarkerPlace,
  type Operation,
  type OperationRequests,
  type OperationResponses,
  OPERATIONS,
  RENDERING_TRAITS,
  type RenderingTrait,
  REPORT_SCHEMA,
  REQUEST_FAILURES,
  type RequestErrorRecord,
  type RequestFailure,
  type RunMarkers,
  type RunPhase,
  type RunReport,
  type RunState,
  type Sample,
  type StagingConfig,
  type StagingTimeouts,
  type TargetRef,
  type Timing,
  type Verdict,
  VERDICTS,
} from "./contract.ts";
export {
  type JobProgress,
  type JobRequest,
  type JobState,
  RunJobs,
  type RunJobView,
  type RunRecording,
  type StartedJob,
  type TraceWrite,
} from "./runs.ts";
export {
  type LedgerHead,
  type PinnedAssertion,
  REGRESSION_STATUSES,
  type RegressionDefinition,
  type RegressionStatus,
  type RegressionView,
  type RunContract,
  type TargetSource,
} from "./ledger.ts";
