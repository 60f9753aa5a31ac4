/**
 * Maintenance of the observability index: rebuild index rows from the
 * canonical envelopes (backfill), compare the two exactly (parity), expire
 * index rows and previews on their schedules (retention), delete envelopes
 * through a reviewed, archived plan (source expiry), erase a subject from
 * every table (reviewed with a confirmation, or propagated from a deletion
 * event), and report health with deterministic alerts (`obsHealth` computes
 * every figure; a server keeps the costly link checks in a `HealthMonitor`,
 * which states their age).
 *
 * May import the root (model, schema, normalize, counters),
 * `ingest/mod.ts` (the index row builder a rebuild must share with ingest),
 * `query/mod.ts` (health's latency probes), `lib/db.ts`, `lib/errors.ts`,
 * `lib/issues.ts`, `lib/canonical_json.ts` and `lib/data_dir.ts`.
 *
 * @module
 */

export {
  backfill,
  BACKFILL_ISSUE_CODES,
  type BackfillIssue,
  type BackfillIssueCode,
  type BackfillOptions,
  type BackfillResult,
  DEFAULT_BACKFILL_PAGE,
  MAX_BACKFILL_PAGE,
} from "./backfill.ts";
export {
  DEFAULT_PARITY_PAGE,
  DEFAULT_PARITY_PAGE_BOUND,
  parity,
  PARITY_MISMATCH_CODES,
  PARITY_STATUSES,
  type ParityMismatch,
  type ParityMismatchCode,
  type ParityOptions,
  type ParityResult,
  type ParityStatus,
  readRecordedParity,
  type RecordedParity,
  type RecordedParityChecks,
} from "./parity.ts";
export {
  AUTO_VACUUM_MODES,
  type AutoVacuumMode,
  DEFAULT_RETENTION_BATCH,
  DEFAULT_RETENTION_DAYS,
  MAX_RETENTION_DAYS,
  RECLAIM_METHODS,
  type ReclaimMethod,
  retention,
  type RetentionOptions,
  type RetentionPolicy,
  retentionPolicy,
  type RetentionResult,
  type StorageBefore,
  type StorageReport,
} from "./retention.ts";
export {
  confirmationFor,
  DEFAULT_EXPIRY_LIMIT,
  EXPIRY_PLAN_VERSION,
  type ExpiryPlan,
  type ExpiryPlanEntry,
  ExpiryPlanSchema,
  MAX_EXPIRY_LIMIT,
  parseExpiryPlan,
  planExpiry,
  type PlanExpiryOptions,
} from "./expiry_plan.ts";
export {
  applyExpiry,
  type ApplyExpiryOptions,
  type ArchiveCallback,
  type ArchiveReceipt,
  checkExpiryConfirmation,
  DEFAULT_EXPIRY_BATCH,
  EXPIRY_REFUSAL_CODES,
  type ExpiryBatchFailure,
  type ExpiryRefusalCode,
  type ExpiryResult,
  MAX_ARCHIVE_LOCATION,
} from "./expiry.ts";
export {
  type ArchiveClaim,
  type ArchiveWrite,
  claimArchive,
  directoryArchive,
} from "./archive.ts";
export type { EnvelopeRecord } from "./envelopes.ts";
export {
  type CounterReport,
  type IndexReadiness,
  type InstrumentationVersions,
  type LinkCheck,
  type LinkCounts,
  MAX_LATENCY_SAMPLES,
  type ObsHealth,
  obsHealth,
  type ObsHealthOptions,
  type PreviewTruncation,
  type TableCounts,
} from "./health.ts";
export {
  DEFAULT_LINK_CHECK_MAX_AGE_MS,
  FRESH_LINK_CHECK_EVENTS,
  HealthMonitor,
  type HealthMonitorOptions,
} from "./health_monitor.ts";
export {
  ALERT_SEVERITIES,
  type AlertSeverity,
  type ErasureKeyState,
  HEALTH_ALERT_CODES,
  HEALTH_ALERT_MESSAGES,
  HEALTH_STATUSES,
  type HealthAlert,
  type HealthAlertCode,
  type HealthStatus,
} from "./health_alerts.ts";
export { percentile, type ProbeLatency, type ProbeTiming } from "./latency.ts";
export {
  applyErasure,
  type ApplyErasureOptions,
  eraseNow,
  ERASURE_TABLES,
  type ErasureCounts,
  type ErasureOptions,
  type ErasurePlan,
  type ErasureRecord,
  type ErasureRemainder,
  erasureRemainder,
  type ErasureResult,
  type ErasureTable,
  type ErasureTableCounts,
  type ExpiredArchive,
  type ExpiredEnvelopes,
  planErasure,
} from "./erasure.ts";
export {
  alreadyErased,
  ErasureUnmatchedError,
  firstIds,
  nothingToApply,
  nothingToApplyAdvice,
  tombstonedCounts,
} from "./erasure_unmatched.ts";
export {
  describeSubjectKind,
  ERASURE_KEY_BYTES,
  erasureKeyId,
  type ErasureSubject,
  type ErasureSubjectInput,
  ErasureSubjectInputSchema,
  MAX_SUBJECT_EVENT_IDS,
  parseErasureSubject,
  SUBJECT_INPUT_KEYS,
  SUBJECT_KINDS,
  subjectDigest,
  type SubjectKind,
} from "./erasure_subject.ts";
export {
  ERASURE_KEY_FILE,
  erasureKey,
  ErasureKeyLostError,
  type ErasureKeyOptions,
  erasureKeyState,
  type ErasureKeyUse,
} from "./erasure_key.ts";
export {
  type ErasureFinish,
  erasureReachedFile,
  erasureTruncation,
  finishErasures,
  lastUnreachedSeq,
  markUnreachedIn,
  settleUnreached,
  unreachedErasures,
} from "./erasure_reach.ts";
export {
  type ErasedEvent,
  type ErasedEventKey,
  ERASURE_SCOPES,
  type ErasureExecutor,
  type ErasureParticipant,
  erasureParticipants,
  type ErasureScope,
  type ErasureTarget,
  OWN_PARTICIPANTS,
  registerErasureParticipant,
} from "./erasure_participants.ts";
export {
  type DeletionCandidate,
  MEMORY_DELETION_KINDS,
  type PropagatedErasure,
  propagatedErasure,
  PROPAGATION_ENV,
  propagationByDefault,
} from "./erasure_propagation.ts";
export {
  erasurePropagationSettings,
  propagationEnabled,
  type PropagationSetting,
  setErasurePropagation,
} from "./erasure_settings.ts";
