/**
 * What a memory pipeline did, as content-free records: ingests, queries with
 * the selection behind each answer (the cache entry that served it, or the
 * vectors considered and which were quoted), and deletions with what they
 * reached. Observers (the demo's trace events) turn them into events; nothing
 * here carries document or query text.
 *
 * @module
 */

import type { VectorCandidate } from "./query_path.ts";

/** One thing the pipeline did, without any document or query text. */
export type MemoryActivity =
  | { type: "ingest"; namespace: string; id: string; at: number }
  | {
    type: "query";
    namespace: string;
    at: number;
    /** Whether the answer cache served the answer. */
    cached: boolean;
    /** Cache entry that served or now holds the answer; `null` when nothing matched. */
    cacheEntryId: string | null;
    /** Documents the answer was built from. */
    docIds: string[];
    /** Vector hits considered (empty when the cache served the answer). */
    candidates: VectorCandidate[];
  }
  | {
    type: "delete";
    namespace: string;
    /** The ids the request named. */
    ids: string[];
    at: number;
    /** Namespaces the deletion reached (one, unless the behaviour widens it). */
    namespaces: string[];
    /** Cached answers dropped. */
    cacheEntries: string[];
  };
