/**
 * Namespaced vectors with exact top-k cosine search. Brute force is plenty at
 * demo scale and keeps ranking fully deterministic (ties break by id).
 *
 * @module
 */

import { NamespacedRecords, type ReadOptions } from "./_records.ts";
import { cosineSimilarity, type Vector } from "./embedding.ts";
import { type Clock, systemScheduler } from "./scheduler.ts";

/** One search result. */
export interface VectorHit {
  id: string;
  score: number;
}

/** Options for {@link VectorIndex.search}. */
export interface SearchOptions extends ReadOptions {
  /** Maximum hits (default 3). */
  k?: number;
  /** Hits must score strictly above this (default 0). */
  minScore?: number;
}

/** Namespaced vector records. */
export class VectorIndex {
  #records: NamespacedRecords<Vector>;

  constructor(options: { clock?: Clock } = {}) {
    this.#records = new NamespacedRecords(options.clock ?? systemScheduler);
  }

  /** Adds or replaces the vector of one id. */
  upsert(namespace: string, id: string, vector: Vector): void {
    this.#records.put(namespace, id, vector);
  }

  has(namespace: string, id: string, options: ReadOptions = {}): boolean {
    return this.#records.get(namespace, id, options) !== undefined;
  }

  /** Physically deletes the given ids; returns those that existed. */
  remove(namespace: string, ids: Iterable<string>): string[] {
    return this.#records.remove(namespace, ids);
  }

  /** Soft-deletes the given ids; returns those newly tombstoned. */
  tombstone(namespace: string, ids: Iterable<string>): string[] {
    return this.#records.tombstone(namespace, ids);
  }

  /** Purges tombstones older than `before` (epoch ms); returns how many. */
  compact(before: number): number {
    return this.#records.compact(before);
  }

  /** The `k` most similar vectors in one namespace, best first. */
  search(
    namespace: string,
    query: Vector,
    options: SearchOptions = {},
  ): VectorHit[] {
    const k = options.k ?? 3;
    const minScore = options.minScore ?? 0;
    const hits: VectorHit[] = [];
    for (const [id, vector] of this.#records.entries(namespace, options)) {
      const score = cosineSimilarity(query, vector);
      if (score > minScore) hits.push({ id, score });
    }
    hits.sort((a, b) =>
      b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
    );
    return hits.slice(0, k);
  }

  /** Live vectors in one namespace (tombstones only if asked for). */
  count(namespace: string, options: ReadOptions = {}): number {
    return this.#records.count(namespace, options);
  }

  /** Ids in one namespace. */
  ids(namespace: string, options: ReadOptions = {}): string[] {
    return [...this.#records.entries(namespace, options)].map(([id]) => id);
  }

  /** Namespaces holding any record. */
  namespaces(): string[] {
    return this.#records.namespaces();
  }

  clear(): void {
    this.#records.clear();
  }
}
