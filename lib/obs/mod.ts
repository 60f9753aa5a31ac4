/**
 * The ground floor of the observability index: the event model every path
 * validates against, the tables and their migrations, the canonical
 * metadata-only envelope, coverage profiles and the process counters.
 *
 * The pipelines stand on this floor, each behind its own `mod.ts`:
 * `otlp/` (OTLP/HTTP receiver), `ingest/` (write path), `query/` (read
 * path) and `maint/` (backfill, parity, retention, expiry, health). Nothing
 * here imports them, so this file stays cheap to load (the migration list
 * reads it on every command) and the pipelines never form a loop through
 * it. The root may import only `lib/db.ts`, `lib/errors.ts`, `lib/issues.ts`,
 * `lib/canonical_json.ts` and `lib/display.ts` (the safe display of stored
 * strings, passed on here). Batch bounds (`batch.ts`) live here too, since
 * every pipeline and entry point shares them.
 *
 * @module
 */

export { displaySafe } from "../display.ts";
export {
  BatchTooLargeError,
  MAX_BATCH_EVENTS,
  MAX_BATCH_JSON_VALUES,
  MAX_REPORTED_ISSUES,
} from "./batch.ts";
export {
  ALLOWED_ATTRIBUTE_KEYS,
  ALLOWED_ATTRIBUTE_PREFIXES,
  type Attributes,
  EARLIEST_EVENT_TIME,
  EVENT_STATUSES,
  type EventInput,
  EventInputSchema,
  type EventScope,
  type EventStatus,
  EventTimeSchema,
  isAllowedAttributeKey,
  isWellFormed,
  KNOWN_EVENT_KINDS,
  LATEST_EVENT_TIME,
  LIMITS,
  MODEL_USAGE_ATTRIBUTES,
  type ModelUsage,
  modelUsage,
  OpaqueIdSchema,
  type Outcome,
  OUTCOME_STATUSES,
  OutcomeSchema,
  type OutcomeStatus,
  type PreviewInfo,
  RESOURCE_ROLES,
  type ResourceRef,
  ResourceRefSchema,
  type ResourceRole,
  type Selection,
  SELECTION_REASONS,
  type SelectionCandidate,
  SelectionCandidateSchema,
  type SelectionReason,
  SelectionSchema,
  sliceWellFormed,
  type StoreName,
  STORES,
  TimestampSchema,
  TokenSchema,
  type TraceEvent,
  type ValidEventInput,
} from "./model.ts";
export {
  initializeObs,
  OBS_COMPONENT,
  OBS_MIGRATIONS,
  OBS_SCHEMA_VERSION,
  ObsNotInitializedError,
  requireObs,
} from "./schema.ts";
export { expectedSchemaObjects } from "./schema_objects.ts";
export {
  describeEventIssue,
  ENVELOPE_VERSION,
  type EventIssue,
  type EventMetadata,
  type NormalizedEvent,
  type NormalizedPreview,
  normalizeEvent,
  type NormalizeOptions,
} from "./normalize.ts";
export { fastValidEvent } from "./_event_fast_path.ts";
export {
  COVERAGE_STATES,
  type CoverageAssessment,
  type CoverageGap,
  type CoverageProfile,
  type CoverageProfileSpec,
  type CoverageState,
  listCoverageProfiles,
  MAX_PROFILE_STAGES,
  registerCoverageProfile,
  type RegistrationStatus,
} from "./coverage.ts";
export {
  type IngestedEvent,
  type IngestObserver,
  observeIngest,
} from "./ingest_observers.ts";
export {
  COUNTER_NAMES,
  type CounterName,
  counterSnapshot,
  incrementCounter,
  resetCounters,
} from "./counters.ts";
