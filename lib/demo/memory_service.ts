/**
 * A small RAG memory service assembled from the demo parts: a source store
 * (truth), a vector index written only by the indexing worker, and an answer
 * cache on the query path. It implements the staging adapter operations and
 * can inject one {@link DemoDefect} into its deletion path.
 *
 * Data flow: ingest stores the source, then awaits the worker's upsert of the
 * vector (so the document is searchable on return) and drops the namespace's
 * cached answers. Query answers from the cache, or searches the namespace's
 * vectors and builds the answer from the matching source texts, caching it.
 * Delete removes source and vectors for the supplied ids, drops cached answers
 * built from them, and queues a delayed re-index of the touched ids, a repair
 * pass that re-reads the source when it runs and so leaves deleted ids alone.
 *
 * @module
 */

import type { Inventory } from "../contract/protocol.ts";
import { AnswerCache } from "../memory/answer_cache.ts";
import { DEFAULT_DEFECT_DELAY_MS, type DemoDefect } from "./defects.ts";
import { type Embedder, HashEmbedder } from "../memory/embedding.ts";
import {
  type AppliedJob,
  IndexingWorker,
  type IndexJob,
} from "../memory/indexing_worker.ts";
import { type Scheduler, systemScheduler } from "../memory/scheduler.ts";
import { SourceStore } from "../memory/source_store.ts";
import { VectorIndex } from "../memory/vector_index.ts";
import {
  answerQuery,
  type QueryParts,
  type QueryResult,
} from "../memory/query_path.ts";
import type { DemoTraceRecord } from "./demo_tracing.ts";

export { NO_MATCH_ANSWER, type QueryResult } from "../memory/query_path.ts";

/** Options for {@link MemoryService}. */
export interface MemoryServiceOptions {
  /** Defect to inject; absent or `null` for correct deletion. */
  defect?: DemoDefect | null;
  /** Delay of timed defects and of the post-delete re-index pass (ms, default 800). */
  delayMs?: number;
  scheduler?: Scheduler;
  embedder?: Embedder;
  /** Documents retrieved per query (default 3). */
  topK?: number;
  /** Called after each indexing job is applied. */
  onIndexed?: (job: AppliedJob) => void;
  /** Receives content-free records of ingests, queries (with their selection) and deletions. */
  onTrace?: (record: DemoTraceRecord) => void;
}

/** What a delete changed. */
export interface DeleteSummary {
  acknowledged: true;
  /** Namespaces the deletion touched (one, unless a defect widens it). */
  namespaces: string[];
  /** Cached answers dropped. */
  cacheEntries: string[];
}

/** The demo RAG memory service. */
export class MemoryService {
  readonly defect: DemoDefect | null;
  readonly delayMs: number;
  #sources: SourceStore;
  #vectors: VectorIndex;
  #cache: AnswerCache;
  #worker: IndexingWorker;
  #embedder: Embedder;
  #topK: number;
  #parts: QueryParts;
  #scheduler: Scheduler;
  #onTrace: ((record: DemoTraceRecord) => void) | undefined;

  constructor(options: MemoryServiceOptions = {}) {
    const scheduler = options.scheduler ?? systemScheduler;
    this.defect = options.defect ?? null;
    this.delayMs = checkedDelay(options.delayMs ?? DEFAULT_DEFECT_DELAY_MS);
    this.#embedder = options.embedder ?? new HashEmbedder();
    this.#topK = options.topK ?? 3;
    this.#sources = new SourceStore({ clock: scheduler });
    this.#vectors = new VectorIndex({ clock: scheduler });
    this.#cache = new AnswerCache({ clock: scheduler });
    this.#worker = new IndexingWorker(this.#vectors, {
      embedder: this.#embedder,
      scheduler,
      ...(options.onIndexed ? { onApplied: options.onIndexed } : {}),
    });
    this.#scheduler = scheduler;
    this.#onTrace = options.onTrace;
    this.#parts = {
      sources: this.#sources,
      vectors: this.#vectors,
      cache: this.#cache,
      embedder: this.#embedder,
      topK: this.#topK,
    };
  }

  /** Stores a document; resolves once it is searchable. */
  async ingest(
    namespace: string,
    id: string,
    text: string,
  ): Promise<{ id: string }> {
    this.#sources.put(namespace, id, text);
    await this.#worker.submit({ kind: "upsert", namespace, id, text });
    // New content can change any answer of this namespace.
    this.#cache.invalidateNamespace(namespace);
    this.#trace({ type: "ingest", namespace, id, at: this.#scheduler.now() });
    return { id };
  }

  /** Answers from the cache or from a top-k vector search over one namespace. */
  query(namespace: string, query: string): QueryResult {
    const result = answerQuery(this.#parts, namespace, query, {
      includeTombstoned: this.defect === "soft-delete",
    });
    this.#trace({
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

  /** Record counts per store for one namespace. */
  inventory(namespace: string): Inventory {
    return {
      complete: this.defect !== "partial-inventory",
      source_records: this.#sources.count(namespace),
      vector_records: this.#vectors.count(namespace),
      cache_records: this.#cache.count(namespace),
    };
  }

  /** Deletes exactly `ids` in `namespace`; unknown ids are a no-op. */
  async delete(
    namespace: string,
    ids: readonly string[],
  ): Promise<DeleteSummary> {
    const targets = this.defect === "lost-control"
      ? this.#tenantWide(namespace)
      : new Map([[namespace, ids]]);
    const cacheEntries: string[] = [];
    for (const [space, spaceIds] of targets) {
      cacheEntries.push(...await this.#deleteIn(space, spaceIds));
    }
    this.#trace({
      type: "delete",
      namespace,
      ids: [...ids],
      at: this.#scheduler.now(),
      namespaces: [...targets.keys()],
      cacheEntries,
    });
    return {
      acknowledged: true,
      namespaces: [...targets.keys()],
      cacheEntries,
    };
  }

  /** Resolves when no indexing job is queued (delayed jobs excepted). */
  settled(): Promise<void> {
    return this.#worker.idle();
  }

  /** Cancels pending background jobs; the service refuses writes afterwards. */
  close(): void {
    this.#worker.close();
  }

  #trace(record: DemoTraceRecord): void {
    try {
      this.#onTrace?.(record);
    } catch {
      // Tracing is an observer: a broken sink must never change an answer.
    }
  }

  async #deleteIn(
    namespace: string,
    ids: readonly string[],
  ): Promise<string[]> {
    const touched = ids.filter((id) =>
      this.#sources.get(namespace, id, { includeTombstoned: true }) !==
        undefined ||
      this.#vectors.has(namespace, id, { includeTombstoned: true })
    );
    const resolve = this.#reindexSource(namespace, touched);
    const soft = this.defect === "soft-delete";
    if (soft) this.#sources.tombstone(namespace, ids);
    else this.#sources.remove(namespace, ids);
    const removal: IndexJob = {
      kind: "remove",
      namespace,
      ids: [...ids],
      mode: soft ? "soft" : "hard",
    };
    if (this.defect === "slow-vector") {
      this.#worker.submitAfter(this.delayMs, removal);
    } else await this.#worker.submit(removal);
    const dropped = this.defect === "stale-cache"
      ? []
      : this.#cache.invalidateDocs(namespace, ids);
    if (touched.length > 0) {
      this.#worker.submitAfter(this.delayMs, {
        kind: "reindex",
        namespace,
        ids: touched,
        resolve,
      });
    }
    return dropped;
  }

  /** Where the re-index pass reads texts from: the live source, or (defect) a stale copy. */
  #reindexSource(
    namespace: string,
    ids: readonly string[],
  ): (id: string) => string | undefined {
    if (this.defect !== "vector-resurrect") {
      return (id) => this.#sources.get(namespace, id);
    }
    // The defect: texts captured before the deletion lands, so the job re-adds deleted vectors.
    const snapshot = new Map<string, string>();
    for (const id of ids) {
      const text = this.#sources.get(namespace, id);
      if (text !== undefined) snapshot.set(id, text);
    }
    return (id) => snapshot.get(id);
  }

  /** The lost-control shortcut: every namespace sharing the tenant prefix, with all its ids. */
  #tenantWide(namespace: string): Map<string, string[]> {
    const tenant = tenantOf(namespace);
    const spaces = new Set([
      ...this.#sources.namespaces(),
      ...this.#vectors.namespaces(),
      ...this.#cache.namespaces(),
    ]);
    spaces.add(namespace);
    const targets = new Map<string, string[]>();
    for (const space of spaces) {
      if (tenantOf(space) !== tenant) continue;
      const opts = { includeTombstoned: true };
      targets.set(space, [
        ...new Set([
          ...this.#sources.ids(space, opts),
          ...this.#vectors.ids(space, opts),
        ]),
      ]);
    }
    return targets;
  }
}

/** Tenant of a namespace: its prefix up to the first `-` (`trace` for `trace-test-…`). */
function tenantOf(namespace: string): string {
  return namespace.split("-", 1)[0] ?? namespace;
}

function checkedDelay(delayMs: number): number {
  if (!Number.isSafeInteger(delayMs) || delayMs < 0) {
    throw new RangeError(
      `Cannot create memory service: delayMs must be a non-negative integer, got ${delayMs}`,
    );
  }
  return delayMs;
}
