/**
 * The memory pipeline's query path: the answer cache first, else a top-k
 * vector search whose hits are quoted from the source store. The result says which candidates were considered and
 * which one served, so a trace can name the cache entry or the vectors behind
 * an answer.
 *
 * @module
 */

import type { AnswerCache } from "./answer_cache.ts";
import type { Embedder } from "./embedding.ts";
import type { SourceStore } from "./source_store.ts";
import type { VectorIndex } from "./vector_index.ts";

/** Answer text when nothing in the namespace matches. */
export const NO_MATCH_ANSWER = "No stored memory matches this query";

/** The stores a query reads. */
export interface QueryParts {
  sources: SourceStore;
  vectors: VectorIndex;
  cache: AnswerCache;
  embedder: Embedder;
  /** Documents retrieved per query. */
  topK: number;
}

/** One vector hit the query considered. */
export interface VectorCandidate {
  /** Document id of the vector. */
  id: string;
  /** Zero-based position in the search result. */
  rank: number;
  /** Cosine similarity to the query. */
  score: number;
  /** False when the vector had no live source text to quote (an orphan). */
  selected: boolean;
}

/** What a query returned and where it came from. */
export interface QueryResult {
  /** The answer as the adapter returns it. */
  text: string;
  /** Documents the answer was built from. */
  docIds: string[];
  /** Whether the answer came from the cache. */
  cached: boolean;
  /** Cache entry that served or now holds the answer; `null` when nothing matched. */
  cacheEntryId: string | null;
  /** Vector hits considered (empty when the cache served the answer). */
  candidates: VectorCandidate[];
}

/** Options for {@link answerQuery}. */
export interface AnswerOptions {
  /** Whether search and quoting also read tombstoned records. */
  includeTombstoned?: boolean;
}

/** Answers `query` over one namespace from the cache, or from search plus source texts. */
export function answerQuery(
  parts: QueryParts,
  namespace: string,
  query: string,
  options: AnswerOptions = {},
): QueryResult {
  const hit = parts.cache.get(namespace, query);
  if (hit) {
    return {
      text: hit.text,
      docIds: [...hit.docIds],
      cached: true,
      cacheEntryId: hit.id,
      candidates: [],
    };
  }
  const read = { includeTombstoned: options.includeTombstoned === true };
  const hits = parts.vectors.search(namespace, parts.embedder.embed(query), {
    k: parts.topK,
    ...read,
  });
  const candidates: VectorCandidate[] = [];
  const docs: { id: string; text: string }[] = [];
  hits.forEach(({ id, score }, rank) => {
    // A vector without a source (orphan) has nothing to quote.
    const text = parts.sources.get(namespace, id, read);
    candidates.push({ id, rank, score, selected: text !== undefined });
    if (text !== undefined) docs.push({ id, text });
  });
  // Empty answers are not cached: they hold no data and would only add cache records.
  if (docs.length === 0) {
    return {
      text: NO_MATCH_ANSWER,
      docIds: [],
      cached: false,
      cacheEntryId: null,
      candidates,
    };
  }
  const docIds = docs.map((doc) => doc.id);
  const text = ["Relevant memories:", ...docs.map((doc) => `- ${doc.text}`)]
    .join("\n");
  const entry = parts.cache.set(namespace, query, text, docIds);
  return { text, docIds, cached: false, cacheEntryId: entry.id, candidates };
}
