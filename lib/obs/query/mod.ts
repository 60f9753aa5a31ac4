/**
 * The read path of the observability index: scoped, keyset-paginated pages
 * of events (newest first), aggregate summaries computed in SQL, and a
 * metadata-only NDJSON export, all selected by one validated filter (also
 * readable from a query string). Every answer states its read completeness,
 * instrumentation coverage and outcome verification separately; preview
 * content is never read.
 *
 * May import the root (model, schema, coverage), `lib/db.ts`,
 * `lib/errors.ts`, `lib/issues.ts` and `lib/canonical_json.ts`; nothing from
 * the other pipelines.
 *
 * @module
 */

export {
  DEFAULT_PAGE_LIMIT,
  MAX_PAGE_LIMIT,
  OUTCOME_VERIFICATION,
  type OutcomeVerification,
  parseTraceQuery,
  queryTraceEvents,
  READ_COMPLETENESS,
  type ReadCompleteness,
  type TraceEventPage,
  type TraceQuery,
  TraceQuerySchema,
} from "./query.ts";
export {
  MAX_SUMMARY_EVENTS,
  MAX_SUMMARY_GROUPS,
  MAX_SUMMARY_KINDS,
  summarizeTraceEvents,
  type SummaryGroup,
  type SummaryOptions,
  type SummaryWindow,
  type TraceSummary,
} from "./summaries.ts";
export {
  exportEvents,
  type ExportOptions,
  type ExportResult,
} from "./export.ts";
export {
  parseTraceFilter,
  STORE_SELECTIONS,
  type StoreSelection,
  timeRangeValid,
  TRACE_FILTER_ENTRIES,
  type TraceFilter,
  TraceFilterSchema,
} from "./filters.ts";
export {
  TRACE_QUERY_PARAMS,
  traceFilterFromParams,
  type TraceParamsOptions,
  traceQueryFromParams,
  type TraceQueryParam,
} from "./params.ts";
export { type PreviewContent, readPreviewContent } from "./preview_content.ts";
export {
  type AnalysisFinding,
  type AnalysisSeverity,
  analyzeTrace,
  type Lineage,
  LINEAGE_LANES,
  type LineageLane,
  type LineageRef,
  MAX_LANE_REFS,
  type RejectedCandidate,
  traceLineage,
} from "./lineage.ts";
export {
  DEFAULT_FIND_GROUPS,
  FIND_WINDOW,
  type FindPage,
  type FindQuery,
  findTraceRoots,
  type FoundEvent,
  GROUP_EVENTS_SHOWN,
  MAX_FIND_GROUPS,
  type RootGroup,
} from "./find.ts";
export { MAX_GROUP_COUNT, type RootTotals } from "./_group_totals.ts";
export { ID_FIELDS, type IdField } from "./_find_sql.ts";
export { outOfTurn, readStatement } from "./_turns.ts";
export { SCAN_LIMIT } from "./_scan.ts";
export {
  KIND_PROBE_LIMIT,
  type KindsAbsent,
  kindsAbsentFromScope,
  type KindScope,
  kindsNotInScope,
} from "./kinds.ts";
export { type IdMatch, matchOpaqueId, MAX_ID_MATCH_COUNT } from "./id_match.ts";
export {
  MAX_OVERVIEW_GROUPS,
  OVERVIEW_EVENTS,
  type OverviewGroup,
  type OverviewOptions,
  type TraceOverview,
  traceOverview,
} from "./overview.ts";
export {
  MAX_ROOT_EVENTS,
  readRootEvents,
  type RootRead,
  type RootReadOptions,
} from "./root_events.ts";
export {
  type EventsById,
  lookupEvent,
  MAX_ID_LOOKUP,
  type PartOfPlace,
  readEventsById,
} from "./event_lookup.ts";
export {
  type DeletionUse,
  type DeletionUseOptions,
  type EventPointer,
  MAX_DELETION_USES,
  readThreadEvidence,
  type RefUse,
  servedAfterDeletion,
  type ServedRef,
  THREAD_EVIDENCE_EVENTS,
  type ThreadEvidence,
} from "./deletion_evidence.ts";
export {
  compareRoots,
  MAX_COMPARE_REFS,
  type RefDifference,
  type RootComparison,
  type SideCounts,
} from "./compare_roots.ts";
export {
  type EventSnapshot,
  SNAPSHOT_EVENTS,
  SNAPSHOT_ROWS_PER_STORE,
  snapshotEvents,
} from "./snapshot.ts";
export {
  type ArtifactEvidence,
  artifactEvidence,
  type ContractEvidence,
  contractEvidence,
  type EvidenceState,
  type RecordedArtifact,
  type StageCheck,
} from "./inspection.ts";
