/**
 * The observability index of agent-memory trace events: record what an
 * agent retrieved, selected, stored and delivered; query it under a tenant
 * scope with keyset cursors; keep it healthy (backfill, parity, retention,
 * reviewed source expiry, health); and forget a subject from everything
 * Trace keeps, with a receipt in the ledger.
 *
 * @example Record a search and read it back
 * ```ts
 * import { createRecorder, initializeObs, openDb, queryTraceEvents } from "@trace/trace/obs";
 *
 * const db = await openDb({ dataDir: "./.trace" });
 * await initializeObs(db);
 * const recorder = createRecorder(db, { application_id: "app-1", agent_id: "support-bot" });
 * await recorder.record({ kind: "memory_search", thread_id: "t-1" });
 * const page = await queryTraceEvents(db, { application_id: "app-1", thread_id: "t-1" });
 * console.log(page.events.length, page.read_completeness);
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

// The event model
export {
  type Attributes,
  EVENT_STATUSES,
  type EventInput,
  type EventScope,
  type EventStatus,
  initializeObs,
  KNOWN_EVENT_KINDS,
  LIMITS,
  type Outcome,
  OUTCOME_STATUSES,
  type OutcomeStatus,
  type PreviewInfo,
  RESOURCE_ROLES,
  type ResourceRef,
  type ResourceRole,
  type Selection,
  SELECTION_REASONS,
  type SelectionCandidate,
  type SelectionReason,
  type StoreName,
  STORES as EVENT_STORES,
  type TraceEvent,
} from "./lib/obs/mod.ts";

// Coverage profiles
export {
  COVERAGE_STATES,
  type CoverageAssessment,
  type CoverageGap,
  type CoverageProfile,
  type CoverageProfileSpec,
  type CoverageState,
  listCoverageProfiles,
  registerCoverageProfile,
  type RegistrationStatus,
} from "./lib/obs/mod.ts";

// Writing: the recorder and batch ingest
export {
  type BatchOrigin,
  createRecorder,
  INGEST_SOURCES,
  ingestEvents,
  type IngestItemResult,
  type IngestOptions,
  type IngestResult,
  type IngestSource,
  type IntentOptions,
  type RecordedEvent,
  type Recorder,
  recorderForWorker,
  type RecordEvent,
  type RecordOptions,
  type SelectionDecision,
  TENANT_SCOPE_KEYS,
  type TenantScopeKey,
  type TraceContext,
} from "./lib/obs/ingest/mod.ts";

// Reading: pages, summaries, export
export {
  exportEvents,
  type ExportOptions,
  type ExportResult,
  OUTCOME_VERIFICATION,
  type OutcomeVerification,
  parseTraceFilter,
  parseTraceQuery,
  queryTraceEvents,
  READ_COMPLETENESS,
  type ReadCompleteness,
  STORE_SELECTIONS,
  type StoreSelection,
  summarizeTraceEvents,
  type SummaryGroup,
  type SummaryOptions,
  type SummaryWindow,
  type TraceEventPage,
  type TraceFilter,
  type TraceQuery,
  type TraceSummary,
} from "./lib/obs/query/mod.ts";

// Maintenance: backfill, parity, retention, source expiry, health
export {
  ALERT_SEVERITIES,
  type AlertSeverity,
  applyExpiry,
  type ApplyExpiryOptions,
  type ArchiveCallback,
  type ArchiveReceipt,
  type ArchiveWrite,
  AUTO_VACUUM_MODES,
  type AutoVacuumMode,
  backfill,
  BACKFILL_ISSUE_CODES,
  type BackfillIssue,
  type BackfillIssueCode,
  type BackfillOptions,
  type BackfillResult,
  type CounterReport,
  directoryArchive,
  type EnvelopeRecord,
  type ErasureKeyState,
  EXPIRY_PLAN_VERSION,
  EXPIRY_REFUSAL_CODES,
  type ExpiryBatchFailure,
  type ExpiryPlan,
  type ExpiryPlanEntry,
  type ExpiryRefusalCode,
  type ExpiryResult,
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
  MAX_ARCHIVE_LOCATION,
  type ObsHealth,
  obsHealth,
  type ObsHealthOptions,
  parity,
  PARITY_MISMATCH_CODES,
  PARITY_STATUSES,
  type ParityMismatch,
  type ParityMismatchCode,
  type ParityOptions,
  type ParityResult,
  type ParityStatus,
  parseExpiryPlan,
  planExpiry,
  type PlanExpiryOptions,
  type PreviewTruncation,
  type ProbeLatency,
  type ProbeTiming,
  readRecordedParity,
  RECLAIM_METHODS,
  type ReclaimMethod,
  type RecordedParity,
  type RecordedParityChecks,
  retention,
  type RetentionOptions,
  type RetentionPolicy,
  retentionPolicy,
  type RetentionResult,
  type StorageBefore,
  type StorageReport,
  type TableCounts,
} from "./lib/obs/maint/mod.ts";

export { COUNTER_NAMES, type CounterName } from "./lib/obs/mod.ts";

// Trace forgets too: subject erasure, participants, receipts, propagation
export {
  type ApplyErasureOptions,
  type ErasedEvent,
  type ErasedEventKey,
  ERASURE_SCOPES,
  ERASURE_TABLES,
  type ErasureCounts,
  type ErasureExecutor,
  erasureKey,
  type ErasureKeyOptions,
  type ErasureKeyUse,
  type ErasureOptions,
  type ErasureParticipant,
  type ErasurePlan,
  type ErasureRecord,
  type ErasureRemainder,
  type ErasureResult,
  type ErasureScope,
  type ErasureSubject,
  type ErasureSubjectInput,
  type ErasureTable,
  type ErasureTableCounts,
  type ErasureTarget,
  ErasureUnmatchedError,
  type ExpiredArchive,
  type ExpiredEnvelopes,
  parseErasureSubject,
  registerErasureParticipant,
  setErasurePropagation,
  SUBJECT_KINDS,
  type SubjectKind,
} from "./lib/obs/maint/mod.ts";
export type {
  SqlArgument,
  SqlCell,
  SqlResult,
  SqlStatement,
} from "./lib/obs/maint/erasure_participants.ts";
export {
  type AppliedErasure,
  enableErasurePropagation,
  eraseSubject,
  erasureKeyFor,
  type ErasureKeyForOptions,
  type ErasureVerification,
  planSubjectErasure,
  type PropagationOptions,
  type SubjectErasureOptions,
  type SubjectErasurePlan,
  verifyErasure,
} from "./lib/runs/mod.ts";
export {
  type ErasureReceipt,
  RECEIPT_SCHEMA,
  RECEIPT_TRIGGERS,
  type ReceiptTrigger,
  type RecordedReceipt,
} from "./lib/ledger/erasure_receipts.ts";
export type { LedgerHead } from "./lib/ledger/head.ts";

// Trace's own index behind the staging contract
export {
  createSelfStagingAdapter,
  SELF_STAGING_APPLICATION,
  type SelfErase,
  type SelfStagingAdapter,
  type SelfStagingExchange,
  type SelfStagingOptions,
  type SelfStoredCounts,
} from "./lib/obs/self_contract/mod.ts";

// The staging contract's shapes the self adapter answers with
export type {
  Inventory,
  Operation,
  OperationRequests,
  OperationResponses,
} from "./contract.ts";
export { OPERATIONS } from "./contract.ts";
// The errors this entry point's functions throw share their base and codes.
export { ERROR_CODES, type ErrorCode, TraceError } from "./contract.ts";
