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
