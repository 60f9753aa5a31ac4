/**
 * A reference memory pipeline: the demo's source store, vector index (written
 * only by the indexing worker), answer cache and query path, with one known
 * deletion behaviour switched on. Each reference system is one of these with
 * a fixed {@link PipelineBehaviour}; its timers run on the scheduler it is
 * given, so a scenario on virtual time is fully deterministic.
 *
 * @module
 */

import {
  type Inventory,
  type Operation,
  ProtocolError,
} from "../contract/protocol.ts";
import { AnswerCache } from "./answer_cache.ts";
import { HashEmbedder } from "./embedding.ts";
import { IndexingWorker } from "./indexing_worker.ts";
import { answerQuery, type QueryParts } from "./query_path.ts";
import type { Scheduler, TimerId } from "./scheduler.ts";
import { SourceStore } from "./source_store.ts";
import { VectorIndex } from "./vector_index.ts";
import type { Barrier } from "./barrier.ts";

/** The deletion behaviour of one pipeline; every field defaults to the correct design. */
export interface PipelineBehaviour {
  /** Soft-delete source and vectors instead of removing them. */
  tombstones?: boolean;
  /** Tombstones are purged this many ms after the deletion (default: never within a run). */
  compactAfterMs?: number;
  /** Vector deletion reaches the index only after this many ms. */
  vectorDelayMs?: number;
  /** Deletion never drops cached answers. */
  staleCache?: boolean;
  /**
   * Every ingest also queues a re-embedding job carrying the text behind a
   * stalled worker; the backlog runs when this barrier is released.
   */
  stalledWorker?: Barrier;
  /** Deletion matches every namespace of the tenant (the prefix before the first `-`). */
  tenantWideDelete?: boolean;
  /** Deletion finds ids by paging the shared table with this page size, but reads only page one. */
  deletionFirstPageOnly?: number;
  /**
   * Inventory pages a listing that puts the live segment first and archived
   * (tombstoned) records on later pages, reads only page one of this size,
   * and still answers `complete: true`.
   */
  inventoryFirstPageOnly?: number;
}

/** Records physically held for a namespace, whatever the inventory says. */
export interface StoredCounts {
  source_records: number;
  vector_records: number;
  cache_records: number;
}

const NEVER_MS = 3_600_000;

/** A small RAG memory pipeline with one known deletion behaviour. */
export class ReferencePipeline {
  #sources: SourceStore;
  #vectors: VectorIndex;
  #cache: AnswerCache;
  #worker: IndexingWorker;
  #parts: QueryParts;
  #scheduler: Scheduler;
  #behaviour: PipelineBehaviour;
  #timers = new Set<TimerId>();
  #closed = false;

  constructor(scheduler: Scheduler, behaviour: PipelineBehaviour = {}) {
    this.#scheduler = scheduler;
    this.#behaviour = behaviour;
    const embedder = new HashEmbedder();
    this.#sources = new SourceStore({ clock: scheduler });
    this.#vectors = new VectorIndex({ clock: scheduler });
    this.#cache = new AnswerCache({ clock: scheduler });
    this.#worker = new IndexingWorker(this.#vectors, { embedder, scheduler });
    this.#parts = {
      sources: this.#sources,
      vectors: this.#vectors,
      cache: this.#cache,
      embedder,
      topK: 3,
    };
  }

  /** Writes `count` background records of other tenants, ahead of anything a run ingests. */
  async seed(count: number, tenants = 5): Promise<void> {
    const jobs: Promise<void>[] = [];
    for (let i = 0; i < count; i++) {
      const namespace = `seed-tenant-${i % tenants}`;
      const id = `seed-doc-${i}`;
      const text = `Background record ${i} of ${namespace}.`;
      this.#sources.put(namespace, id, text);
      jobs.push(this.#worker.submit({ kind: "upsert", namespace, id, text }));
    }
    await Promise.all(jobs);
  }

  /** Answers one staging operation; the body is checked like an HTTP adapter would. */
  async handle(
    op: Operation,
    body: Record<string, unknown>,
  ): Promise<Record<string, unknown>> {
    if (this.#closed) {
      throw new ProtocolError(
        "connect",
        `Request /${op} failed: system closed`,
      );
    }
    // Background jobs that fell due are applied before the next request is answered.
    await this.#worker.idle();
    const namespace = field(op, body, "namespace");
    switch (op) {
      case "ingest":
        return await this.ingest(
          namespace,
          field(op, body, "id"),
          field(op, body, "text"),
        );
      case "query":
        return { text: this.query(namespace, field(op, body, "query")) };
      case "inventory":
        return { ...this.inventory(namespace) };
      case "delete":
        await this.delete(namespace, idList(body));
        return { acknowledged: true };
    }
  }

  /** Stores a document; it is searchable on return. */
  async ingest(
    namespace: string,
    id: string,
    text: string,
  ): Promise<{ id: string }> {
    this.#sources.put(namespace, id, text);
    await this.#worker.submit({ kind: "upsert", namespace, id, text });
    this.#cache.invalidateNamespace(namespace);
    const stalled = this.#behaviour.stalledWorker;
    if (stalled && !stalled.released) {
      // The defect: the job carries the text itself, so it cannot know the document was deleted since.
      stalled.onRelease(() => {
        this.#worker.submit({ kind: "upsert", namespace, id, text }).catch(
          () => {},
        );
      });
    }
    return { id };
  }

  /** The answer text for `query` (the shared demo query path). */
  query(namespace: string, query: string): string {
    return answerQuery(this.#parts, namespace, query).text;
  }

  /** What the adapter reports for one namespace. */
  inventory(namespace: string): Inventory {
    const pageSize = this.#behaviour.inventoryFirstPageOnly;
    if (pageSize !== undefined) {
      // Page one holds the live segment; archived records start on a later page nobody reads.
      return {
        complete: true,
        source_records: Math.min(this.#sources.count(namespace), pageSize),
        vector_records: Math.min(this.#vectors.count(namespace), pageSize),
        cache_records: this.#cache.count(namespace),
      };
    }
    // An honest inventory counts what is stored, tombstones included.
    return { complete: true, ...this.storedCounts(namespace) };
  }

  /** Deletes `ids` in `namespace` according to the behaviour. */
  async delete(namespace: string, ids: readonly string[]): Promise<void> {
    const targets = this.#behaviour.tenantWideDelete
      ? this.#tenantWide(namespace)
      : new Map([[namespace, this.#reachable(namespace, ids)]]);
    for (const [space, spaceIds] of targets) {
      await this.#deleteIn(space, spaceIds);
    }
    if (this.#behaviour.tombstones) this.#scheduleCompaction();
  }

  /** Records physically held for `namespace`, tombstones included (ground truth). */
  storedCounts(namespace: string): StoredCounts {
    const all = { includeTombstoned: true };
    return {
      source_records: this.#sources.count(namespace, all),
      vector_records: this.#vectors.count(namespace, all),
      cache_records: this.#cache.count(namespace),
    };
  }

  /** Zero-based position of a record in the shared table listing, or -1. */
  listingPosition(namespace: string, id: string): number {
    let position = 0;
    for (const entry of this.#listing()) {
      if (entry.namespace === namespace && entry.id === id) return position;
      position++;
    }
    return -1;
  }

  /** Cancels timers and background jobs; later requests fail. */
  close(): void {
    this.#closed = true;
    for (const id of this.#timers) this.#scheduler.clearTimeout(id);
    this.#timers.clear();
    this.#behaviour.stalledWorker?.discard();
    this.#worker.close();
  }

  async #deleteIn(namespace: string, ids: readonly string[]): Promise<void> {
    const soft = this.#behaviour.tombstones === true;
    if (soft) this.#sources.tombstone(namespace, ids);
    else this.#sources.remove(namespace, ids);
    const removal = {
      kind: "remove" as const,
      namespace,
      ids: [...ids],
      mode: soft ? "soft" as const : "hard" as const,
    };
    const delay = this.#behaviour.vectorDelayMs;
    if (delay !== undefined) this.#worker.submitAfter(delay, removal);
    else await this.#worker.submit(removal);
    if (!this.#behaviour.staleCache) this.#cache.invalidateDocs(namespace, ids);
  }

  /** The ids a deletion actually reaches. */
  #reachable(namespace: string, ids: readonly string[]): string[] {
    const pageSize = this.#behaviour.deletionFirstPageOnly;
    if (pageSize === undefined) return [...ids];
    // The defect: the scan stops after the first page and never follows the cursor.
    const wanted = new Set(ids);
    const found: string[] = [];
    let seen = 0;
    for (const entry of this.#listing()) {
      if (seen++ >= pageSize) break;
      if (entry.namespace === namespace && wanted.has(entry.id)) {
        found.push(entry.id);
      }
    }
    return found;
  }

  /** The shared table in storage order: namespaces as created, records as written. */
  *#listing(): Generator<{ namespace: string; id: string }> {
    for (const namespace of this.#sources.namespaces()) {
      for (
        const id of this.#sources.ids(namespace, { includeTombstoned: true })
      ) {
        yield { namespace, id };
      }
    }
  }

  #tenantWide(namespace: string): Map<string, string[]> {
    const tenant = tenantOf(namespace);
    const spaces = new Set([
      namespace,
      ...this.#sources.namespaces(),
      ...this.#vectors.namespaces(),
    ]);
    const targets = new Map<string, string[]>();
    const all = { includeTombstoned: true };
    for (const space of spaces) {
      if (tenantOf(space) !== tenant) continue;
      targets.set(space, [
        ...new Set([
          ...this.#sources.ids(space, all),
          ...this.#vectors.ids(space, all),
        ]),
      ]);
    }
    return targets;
  }

  #scheduleCompaction(): void {
    const after = this.#behaviour.compactAfterMs ?? NEVER_MS;
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

/** Tenant of a namespace: its prefix up to the first `-` (`trace` for `trace-test-…`). */
function tenantOf(namespace: string): string {
  return namespace.split("-", 1)[0] ?? namespace;
}

function field(
  op: Operation,
  body: Record<string, unknown>,
  name: string,
): string {
  const value = body[name];
  if (typeof value !== "string" || (name !== "text" && value === "")) {
    throw badRequest(op, `${name}: must be a non-empty string`);
  }
  return value;
}

function idList(body: Record<string, unknown>): string[] {
  const ids = body.ids;
  if (
    !Array.isArray(ids) ||
    !ids.every((id) => typeof id === "string" && id !== "")
  ) {
    throw badRequest("delete", "ids: must be an array of ids");
  }
  return ids;
}

function badRequest(op: Operation, detail: string): ProtocolError {
  return new ProtocolError(
    "http_status",
    `Request /${op} failed: HTTP 400, expected 200 (${detail})`,
    { status: 400 },
  );
}
