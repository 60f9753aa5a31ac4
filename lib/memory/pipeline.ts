/**
 * The one memory pipeline behind the demo staging app and the reference
 * systems: a source store (truth), a vector index written only by the
 * indexing worker, and an answer cache on the query path, orchestrated once.
 * A {@link MemoryBehaviour} says where its deletion departs from the correct
 * design. Time comes from the scheduler it is given: real timers for the demo
 * over HTTP, a manual scheduler for reference runs on virtual time.
 *
 * Data flow: ingest stores the source, awaits the worker's upsert (so the
 * document is searchable on return) and drops the namespace's cached answers.
 * Query answers from the cache, or searches the namespace's vectors and quotes
 * the matching source texts, caching the answer, and renders it as the
 * behaviour says. Delete resolves the records
 * it reaches, removes or tombstones source and vectors, drops the cached
 * answers built from them, and leaves the background work the behaviour asks
 * for (delayed vector removal, a repair re-index, compaction) on the scheduler.
 *
 * @module
 */

import type { Inventory } from "../contract/protocol.ts";
import type { MemoryActivity } from "./activity.ts";
import { AnswerCache } from "./answer_cache.ts";
import { Barrier } from "./barrier.ts";
import { checkBehaviour, type MemoryBehaviour } from "./behaviour.ts";
import { HashEmbedder } from "./embedding.ts";
import { IndexingWorker, type IndexJob } from "./indexing_worker.ts";
import {
  checkRoom,
  DEFAULT_MEMORY_LIMITS,
  type HeldRecords,
  type MemoryLimits,
} from "./limits.ts";
import { deleteRecords, type DeletionParts } from "./_deletion.ts";
import { sharedListing } from "./_listing.ts";
import {
  answerQuery,
  type QueryParts,
  type QueryResult,
} from "./query_path.ts";
import { type Scheduler, systemScheduler, type TimerId } from "./scheduler.ts";
import { renderAnswer } from "./rendering.ts";
import { sourceBytes, SourceStore } from "./source_store.ts";
import { VectorIndex, vectorRecordBytes } from "./vector_index.ts";

export {
  NO_MATCH_ANSWER,
  type QueryResult,
  type VectorCandidate,
} from "./query_path.ts";

/** Options for {@link MemoryPipeline}. */
export interface MemoryPipelineOptions {
  /** Clock and timers of every delay (default: the process's real ones). */
  scheduler?: Scheduler;
  /** Receives a content-free record of each ingest, query and deletion. */
  onActivity?: (activity: MemoryActivity) => void;
  /** What the pipeline holds at most (default {@link DEFAULT_MEMORY_LIMITS}). */
  limits?: Partial<MemoryLimits>;
}

/** What a deletion changed. */
export interface DeleteSummary {
  /** Always `true`: deletion of unknown ids is acknowledged too. */
  acknowledged: true;
  /** Namespaces the deletion reached (one, unless the behaviour widens it). */
  namespaces: string[];
  /** Cached answers dropped. */
  cacheEntries: string[];
}

/** Records physically held for a namespace, whatever the inventory says. */
export interface StoredCounts {
  /** Source documents, tombstoned ones included. */
  source_records: number;
  /** Vectors, tombstoned ones included. */
  vector_records: number;
  /** Cached answers. */
  cache_records: number;
}

const ALL = { includeTombstoned: true };

/** A small RAG memory pipeline whose deletion follows a {@link MemoryBehaviour}. */
export class MemoryPipeline {
  /** The behaviour this pipeline was built with. */
  readonly behaviour: Readonly<MemoryBehaviour>;
  #sources: SourceStore;
  #vectors: VectorIndex;
  #cache: AnswerCache;
  #worker: IndexingWorker;
  /** The stores and the worker, as the query path and deletion read them. */
  #parts: QueryParts & DeletionParts;
  #scheduler: Scheduler;
  #backlog: Barrier | null;
  #onActivity: ((activity: MemoryActivity) => void) | undefined;
  #timers = new Set<TimerId>();
  #closed = false;
  #limits: Readonly<MemoryLimits>;
  #vectorBytes: number;

  /** Builds an empty pipeline; throws `RangeError` for an unusable delay or page size. */
  constructor(
    behaviour: MemoryBehaviour = {},
    options: MemoryPipelineOptions = {},
  ) {
    checkBehaviour(behaviour);
    this.behaviour = Object.freeze({ ...behaviour });
    const scheduler = options.scheduler ?? systemScheduler;
    const embedder = new HashEmbedder();
    this.#scheduler = scheduler;
    this.#sources = new SourceStore({ clock: scheduler });
    this.#vectors = new VectorIndex({ clock: scheduler });
    this.#cache = new AnswerCache({ clock: scheduler });
    this.#worker = new IndexingWorker(this.#vectors, { embedder, scheduler });
    this.#parts = {
      sources: this.#sources,
      vectors: this.#vectors,
      cache: this.#cache,
      worker: this.#worker,
      embedder,
      topK: 3,
    };
    this.#backlog = behaviour.stalledReembedding ? new Barrier() : null;
    this.#onActivity = options.onActivity;
    this.#limits = { ...DEFAULT_MEMORY_LIMITS, ...options.limits };
    this.#vectorBytes = embedder.dimensions * Float32Array.BYTES_PER_ELEMENT;
  }

  /**
   * Stores a document; resolves once it is searchable. Throws
   * `MemoryFullError` when it would pass the pipeline's limits.
   */
  async ingest(
    namespace: string,
    id: string,
    text: string,
  ): Promise<{ id: string }> {
    this.#assertOpen("ingest");
    checkRoom(this.#held(), this.#limits, {
      namespace,
      id,
      // The source record and its vector, measured as the stores measure them.
      bytes: sourceBytes(id, text) + vectorRecordBytes(id, this.#vectorBytes),
    });
    this.#sources.put(namespace, id, text);
    const upsert: IndexJob = { kind: "upsert", namespace, id, text };
    await this.#worker.submit(upsert);
    // New content can change any answer of this namespace.
    this.#cache.invalidateNamespace(namespace);
    if (this.#backlog && !this.#backlog.released) {
      // The job carries the text itself, so it cannot know the document was deleted since.
      this.#backlog.onRelease(() =>
        this.#worker.submit(upsert).catch(() => {})
      );
    }
    this.#record({ type: "ingest", namespace, id, at: this.#scheduler.now() });
    return { id };
  }

  /** Answers from the cache or from a top-k vector search over one namespace. */
  query(namespace: string, query: string): QueryResult {
    this.#assertOpen("query");
    const answered = answerQuery(this.#parts, namespace, query, {
      includeTombstoned: this.behaviour.searchTombstoned === true,
    });
    const rendering = this.behaviour.answerRendering ?? [];
    const result = rendering.length === 0
      ? answered
      : { ...answered, text: renderAnswer(answered.text, rendering) };
    this.#record({
      type: "query",
      namespace,
      at: this.#scheduler.now(),
      cached: result.cached,
      cacheEntryId: result.cacheEntryId,
      docIds: result.docIds,
      candidates: result.candidates,
    });
    return result;
  }

  /** What the adapter reports for one namespace. */
  inventory(namespace: string): Inventory {
    this.#assertOpen("inventory");
    const complete = this.behaviour.inventoryComplete ?? true;
    const cache_records = this.behaviour.inventoryCountsCache === false
      ? 0
      : this.#cache.count(namespace);
    const pageSize = this.behaviour.inventoryFirstPageOnly;
    if (pageSize !== undefined) {
      // Page one holds the live segment; archived records start on a later page nobody reads.
      return {
        complete,
        source_records: Math.min(this.#sources.count(namespace), pageSize),
        vector_records: Math.min(this.#vectors.count(namespace), pageSize),
        cache_records,
      };
    }
    const read = {
      includeTombstoned: this.behaviour.inventoryCountsTombstones ?? true,
    };
    return {
      complete,
      source_records: this.#sources.count(namespace, read),
      vector_records: this.#vectors.count(namespace, read),
      cache_records,
    };
  }

  /** Deletes `ids` in `namespace` as the behaviour says; unknown ids are a no-op. */
  async delete(
    namespace: string,
    ids: readonly string[],
  ): Promise<DeleteSummary> {
    this.#assertOpen("delete");
    const { namespaces, cacheEntries } = await deleteRecords(
      this.#parts,
      this.behaviour,
      namespace,
      ids,
    );
    const compactAfter = this.behaviour.compactAfterMs;
    if (compactAfter !== undefined) this.#scheduleCompaction(compactAfter);
    this.#record({
      type: "delete",
      namespace,
      ids: [...ids],
      at: this.#scheduler.now(),
      namespaces,
      cacheEntries,
    });
    return { acknowledged: true, namespaces, cacheEntries };
  }

  /** Records physically held for `namespace`, tombstones included (ground truth). */
  storedCounts(namespace: string): StoredCounts {
    return {
      source_records: this.#sources.count(namespace, ALL),
      vector_records: this.#vectors.count(namespace, ALL),
      cache_records: this.#cache.count(namespace),
    };
  }

  /** Zero-based position of a record in the shared table listing, or -1. */
  listingPosition(namespace: string, id: string): number {
    let position = 0;
    for (const entry of sharedListing(this.#sources)) {
      if (entry.namespace === namespace && entry.id === id) return position;
      position++;
    }
    return -1;
  }

  /** Lets a stalled worker run its parked re-embedding jobs (see `stalledReembedding`). */
  releaseBacklog(): void {
    this.#backlog?.release();
  }

  /** Resolves when no indexing job is queued (jobs waiting on the scheduler excepted). */
  settled(): Promise<void> {
    return this.#worker.idle();
  }

  /** Whether {@link MemoryPipeline.close} was called. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Cancels timers and background jobs; every later operation throws. */
  close(): void {
    this.#closed = true;
    for (const id of this.#timers) this.#scheduler.clearTimeout(id);
    this.#timers.clear();
    this.#backlog?.discard();
    this.#worker.close();
  }

  /** What the stores hold, as the limits count it. */
  #held(): HeldRecords {
    const sources = this.#sources;
    return {
      hasNamespace: (namespace) => sources.hasNamespace(namespace),
      namespaceCount: sources.namespaceCount,
      recordCount: (namespace) => sources.count(namespace, ALL),
      hasRecord: (namespace, id) =>
        sources.get(namespace, id, ALL) !== undefined,
      // Vectors too: a defect may keep them after their source is gone.
      bytes: sources.bytes + this.#vectors.bytes,
      replacedBytes: (namespace, id) =>
        sources.recordBytes(namespace, id) +
        this.#vectors.recordBytes(namespace, id),
    };
  }

  #assertOpen(op: string): void {
    if (this.#closed) {
      throw new Error(`Cannot ${op}: the memory pipeline is closed`);
    }
  }

  #record(activity: MemoryActivity): void {
    try {
      this.#onActivity?.(activity);
    } catch {
      // An observer must never change an answer.
    }
  }

  #scheduleCompaction(after: number): void {
    const id = this.#scheduler.setTimeout(() => {
      this.#timers.delete(id);
      // Purges tombstones at least `after` ms old; younger ones wait for their own pass.
      const before = this.#scheduler.now() - after + 1;
      this.#sources.compact(before);
      this.#vectors.compact(before);
    }, after);
    this.#timers.add(id);
  }
}

/** The pipeline under the name the reference suite first gave it. */
export type ReferencePipeline = MemoryPipeline;
