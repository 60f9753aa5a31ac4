/**
 * The write path of the observability index. A batch (JSON, NDJSON, mapped
 * OTLP spans or recorder calls) is validated whole, then its canonical
 * envelopes and index rows are written in one transaction: all or nothing,
 * first writer owns an `event_id`. The index row builder is shared with
 * `maint/`, which rebuilds rows from envelopes through it.
 *
 * May import the root (model, schema, normalize, coverage, counters, batch
 * bounds), `lib/db.ts`, `lib/errors.ts`, `lib/issues.ts` and `lib/json/`;
 * nothing from the other pipelines.
 *
 * @module
 */

export {
  type BatchOrigin,
  conflictsWithin,
  INGEST_SOURCES,
  IngestBatchError,
  IngestConflictError,
  ingestEvents,
  type IngestItemResult,
  type IngestOptions,
  type IngestResult,
  type IngestSource,
  ingestValidated,
  MAX_BATCH_EVENTS,
  validateEventBatch,
} from "./ingest.ts";
export {
  type BackgroundCheckpointOptions,
  type BackgroundCheckpoints,
  backgroundTruncation,
  BULK_CHECKPOINT_EVENTS,
  liveCheckpointWorkers,
  noteCommit,
  startBackgroundCheckpoints,
  startBulkCheckpoints,
  TRUNCATE_RETRY_MS,
  type WalTruncation,
} from "./checkpoints.ts";
export { startWriteThread, type WriteThread } from "./write_thread.ts";
export {
  type NdjsonEvents,
  type NdjsonOptions,
  parseNdjsonEvents,
  readNdjsonEvents,
} from "./ndjson.ts";
export {
  BatchTooLargeError,
  MAX_BATCH_JSON_VALUES,
  MAX_REPORTED_ISSUES,
} from "../batch.ts";
export {
  createRecorder,
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
  TraceContextSchema,
} from "./recorder.ts";
export {
  chunkedInsert,
  EVENT_COLUMNS,
  type IndexEntry,
  indexStatements,
  RESOURCE_COLUMNS,
  type SqlStatement,
} from "./index_rows.ts";
export { type InsertedRows, RowCounts } from "./row_counts.ts";
export { literalInserts } from "./_sql_literal.ts";
