/**
 * The memory pipeline's surface: what the demo app, the reference systems and
 * the adapters use. Inside, the stores (source, vectors, answer cache), the
 * indexing worker, the embedder and the query path are parts the pipeline
 * assembles; nothing outside this folder orchestrates them.
 *
 * Data flow: a staging request enters through {@link handleStagingRequest}
 * (validated with the contract's request schemas), the {@link MemoryPipeline}
 * answers it as its {@link MemoryBehaviour} says, background work waits on the
 * injected {@link Scheduler}, and observers receive {@link MemoryActivity}.
 *
 * @module
 */

export type { MemoryActivity } from "./activity.ts";
export {
  CORRECT_BEHAVIOUR,
  type MemoryBehaviour,
  type RepairReindex,
} from "./behaviour.ts";
export {
  DEFAULT_MEMORY_LIMITS,
  MemoryFullError,
  type MemoryLimits,
} from "./limits.ts";
export {
  type DeleteSummary,
  MemoryPipeline,
  type MemoryPipelineOptions,
  NO_MATCH_ANSWER,
  type QueryResult,
  type StoredCounts,
  type VectorCandidate,
} from "./pipeline.ts";
export {
  ANSWER_RENDERINGS,
  type AnswerRendering,
  renderAnswer,
} from "./rendering.ts";
export {
  type Clock,
  ManualScheduler,
  type Scheduler,
  systemScheduler,
  type TimerId,
} from "./scheduler.ts";
export {
  handleStagingRequest,
  type StagingExchange,
} from "./staging_handler.ts";
