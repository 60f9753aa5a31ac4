/**
 * Namespaced vectors with exact top-k cosine search. Brute force is plenty at
 * demo scale and keeps ranking fully deterministic (ties break by id).
 *
 * @module
 */

import {
  NamespacedRecords,
  type ReadOptions,
  type StoreOptions,
} from "./_records.ts";
import { cosineSimilarity, type Vector } from "./embedding.ts";

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

/** Bytes a vector record of `id` holds, its vector `vectorBytes` long. */
export function vectorRecordBytes(id: string, vectorBytes: number): number {
  return 2 * id.length + vectorBytes;
}

/** Namespaced vector records. */
export class VectorIndex extends NamespacedRecords<Vector> {
  constructor(options: StoreOptions = {}) {
    super((id, vector) => vectorRecordBytes(id, vector.byteLength), options);
  }

  /** Adds or replaces the vector of one id. */
  upsert(namespace: string, id: string, vector: Vector): void {
    this.putRecord(namespace, id, vector);
  }

  /** Whether one id has a vector (tombstoned ones only if asked for). */
  has(namespace: string, id: string, options: ReadOptions = {}): boolean {
    return this.getRecord(namespace, id, options) !== undefined;
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
    for (const [id, vector] of this.entries(namespace, options)) {
      const score = cosineSimilarity(query, vector);
      if (score > minScore) hits.push({ id, score });
    }
    hits.sort((a, b) =>
      b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
    );
    return hits.slice(0, k);
  }
}
