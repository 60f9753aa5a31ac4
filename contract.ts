/**
 * The deletion contract: the staging config, the adapter protocol, the HTTP
 * and in-process transports, and the engine that runs one contract and
 * returns its report. Nothing here touches a database.
 *
 * @example Run the contract against an in-process adapter
 * ```ts
 * import { handleStagingRequest, MemoryPipeline, CORRECT_BEHAVIOUR } from "@trace/trace";
 * import { handlerTransport, parseStagingConfig, runDeletionContract } from "@trace/trace/contract";
 *
 * const pipeline = new MemoryPipeline(CORRECT_BEHAVIOUR);
 * const config = parseStagingConfig({
 *   base_url: "http://127.0.0.1:8787",
 *   environment: "staging",
 *   allow_synthetic_writes: true,
 *   deletion_window_seconds: 1,
 *   sample_interval_seconds: 1,
 * });
 * const report = await runDeletionContract(config, {
 *   transport: handlerTransport((op, body) => handleStagingRequest(pipeline, op, body)),
 *   target: { id: "in-process", base_url: config.base_url, source: "config" },
 *   // Where issued ids are checkpointed before each ingest; kept in memory here.
 *   checkpoint: { location: "memory", write: () => Promise.resolve() },
 * });
 * console.log(report.verdict);
 * pipeline.close();
 * ```
 *
 * @module
 */

export { ERROR_CODES, type ErrorCode, TraceError } from "./lib/errors.ts";
export {
  parseStagingConfig,
  parseStagingConfigText,
  type StagingConfig,
  type StagingTimeouts,
} from "./lib/contract/config.ts";
export {
  type Inventory,
  type Operation,
  type OperationRequests,
  type OperationResponses,
  OPERATIONS,
  parseRequest,
  PROTOCOL_REVISION,
  ProtocolError,
  REQUEST_FAILURES,
  type RequestFailure,
  type RequestOptions,
  StagingRequestError,
  type StagingTransport,
  STORES,
} from "./lib/contract/protocol.ts";
export {
  createHttpTransport,
  type HttpTransportOptions,
} from "./lib/http/strict_client.ts";
export {
  handlerTransport,
  type InProcessTransportOptions,
  type StagingHandler,
} from "./lib/reference/transport.ts";
export { runDeletionContract, type RunOptions } from "./lib/runner/engine.ts";
export type { Checkpoint, CheckpointSink } from "./lib/runner/checkpoint.ts";
export type { Clock } from "./lib/runner/clock.ts";
export type { RunIdentifiers } from "./lib/runner/ids.ts";
export { type PlanPhase, planRun, type RunPlan } from "./lib/runner/plan.ts";
export {
  type MarkerForm,
  RENDERING_TRAITS,
  type RenderingTrait,
} from "./lib/runner/marker/mod.ts";
export type {
  RunEvent,
  RunEventListener,
  RunPhase,
} from "./lib/runner/events.ts";
export type { ControlState } from "./lib/runner/control_state.ts";
export {
  type Baseline,
  type Cleanup,
  type CleanupDelete,
  type DeletionRecord,
  type Finding,
  type FindingSeverity,
  type MarkerPlace,
  REPORT_SCHEMA,
  type RequestErrorRecord,
  type RunMarkers,
  type RunReport,
  type RunState,
  type Sample,
  type TargetRef,
  type Timing,
  type Verdict,
  VERDICTS,
} from "./lib/runner/report.ts";
