/**
 * The answer cache on the query path. Each entry remembers which document ids
 * produced its answer: deletion can then invalidate exactly the answers built
 * from deleted documents, and a trace can name the entry that served a reply.
 *
 * @module
 */

import { type Clock, systemScheduler } from "./scheduler.ts";

/** One cached answer. */
export interface CacheEntry {
  /** Stable id of this entry, e.g. `answer-7`. */
  readonly id: string;
  readonly namespace: string;
  /** The normalised query the entry is keyed by. */
  readonly query: string;
  readonly text: string;
  /** Documents the answer was built from. */
  readonly docIds: readonly string[];
  readonly createdAt: number;
}

/** Canonical cache key form of a query: NFKC, trimmed, lower-cased, single spaces. */
export function normalizeQuery(query: string): string {
  return query.normalize("NFKC").trim().toLowerCase().replace(/\s+/g, " ");
}

/** Most an {@link AnswerCache} holds before it drops its oldest entries. */
export interface AnswerCacheBounds {
  entries: number;
  /** Bytes of answer text (UTF-16: 2 per code unit). */
  textBytes: number;
}

/**
 * Far above what a contract run needs (it asks a few queries per canary, the
 * same text at every sample, so a run adds tens of entries), and small
 * enough that clients asking ever new queries cannot grow the process
 * without limit: an answer quotes up to a few documents of at most 100,000
 * characters, so 64 MiB holds at least a hundred of the largest answers.
 */
export const DEFAULT_ANSWER_CACHE_BOUNDS: Readonly<AnswerCacheBounds> = Object
  .freeze({ entries: 20_000, textBytes: 64 * 1024 * 1024 });

/**
 * Namespaced answer cache keyed by normalised query. Past its bounds it
 * drops the entries stored longest ago, in any namespace, as a real cache
 * evicts (an entry replaced by a newer answer counts from the replacement).
 */
export class AnswerCache {
  #spaces = new Map<string, Map<string, CacheEntry>>();
  /** Every entry, oldest first, for eviction across namespaces. */
  #byAge = new Set<CacheEntry>();
  #textBytes = 0;
  #bounds: Readonly<AnswerCacheBounds>;
  #clock: Clock;
  #seq = 0;

  constructor(
    options: { clock?: Clock; bounds?: Readonly<AnswerCacheBounds> } = {},
  ) {
    this.#clock = options.clock ?? systemScheduler;
    this.#bounds = options.bounds ?? DEFAULT_ANSWER_CACHE_BOUNDS;
  }

  get(namespace: string, query: string): CacheEntry | undefined {
    return this.#spaces.get(namespace)?.get(normalizeQuery(query));
  }

  /** Stores an answer and the ids it came from; replaces an entry for the same query. */
  set(
    namespace: string,
    query: string,
    text: string,
    docIds: readonly string[],
  ): CacheEntry {
    const key = normalizeQuery(query);
    const entry: CacheEntry = {
      id: `answer-${++this.#seq}`,
      namespace,
      query: key,
      text,
      docIds: [...docIds],
      createdAt: this.#clock.now(),
    };
    let space = this.#spaces.get(namespace);
    if (!space) this.#spaces.set(namespace, space = new Map());
    const replaced = space.get(key);
    if (replaced) this.#forget(replaced);
    space.set(key, entry);
    this.#byAge.add(entry);
    this.#textBytes += entry.text.length * 2;
    this.#evictPastBounds();
    return entry;
  }

  /** Drops the oldest entries while the cache holds more than its bounds. */
  #evictPastBounds(): void {
    for (const oldest of this.#byAge) {
      if (
        this.#byAge.size <= this.#bounds.entries &&
        this.#textBytes <= this.#bounds.textBytes
      ) return;
      this.#remove(oldest);
    }
  }

  /** Removes `entry` from its namespace and from the cache's accounting. */
  #remove(entry: CacheEntry): void {
    const space = this.#spaces.get(entry.namespace);
    space?.delete(entry.query);
    if (space?.size === 0) this.#spaces.delete(entry.namespace);
    this.#forget(entry);
  }

  /** Takes `entry` out of the age order and byte count (its namespace map is the caller's). */
  #forget(entry: CacheEntry): void {
    if (this.#byAge.delete(entry)) this.#textBytes -= entry.text.length * 2;
  }

  /** Drops entries in `namespace` built from any of `ids`; returns the dropped entry ids. */
  invalidateDocs(namespace: string, ids: Iterable<string>): string[] {
    const space = this.#spaces.get(namespace);
    if (!space) return [];
    const doomed = new Set(ids);
    const dropped: string[] = [];
    for (const [key, entry] of space) {
      if (entry.docIds.some((id) => doomed.has(id))) {
        space.delete(key);
        this.#forget(entry);
        dropped.push(entry.id);
      }
    }
    if (space.size === 0) this.#spaces.delete(namespace);
    return dropped;
  }

  /** Drops every entry of one namespace (its documents changed); returns how many. */
  invalidateNamespace(namespace: string): number {
    const space = this.#spaces.get(namespace);
    for (const entry of space?.values() ?? []) this.#forget(entry);
    this.#spaces.delete(namespace);
    return space?.size ?? 0;
  }

  count(namespace: string): number {
    return this.#spaces.get(namespace)?.size ?? 0;
  }

  /** Entries of one namespace, oldest first. */
  entries(namespace: string): CacheEntry[] {
    return [...this.#spaces.get(namespace)?.values() ?? []];
  }

  /** Namespaces holding any entry. */
  namespaces(): string[] {
    return [...this.#spaces.keys()];
  }

  clear(): void {
    this.#spaces.clear();
    this.#byAge.clear();
    this.#textBytes = 0;
  }
}
