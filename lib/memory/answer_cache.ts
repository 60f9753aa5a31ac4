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

/** Namespaced answer cache keyed by normalised query. */
export class AnswerCache {
  #spaces = new Map<string, Map<string, CacheEntry>>();
  #clock: Clock;
  #seq = 0;

  constructor(options: { clock?: Clock } = {}) {
    this.#clock = options.clock ?? systemScheduler;
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
    space.set(key, entry);
    return entry;
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
        dropped.push(entry.id);
      }
    }
    if (space.size === 0) this.#spaces.delete(namespace);
    return dropped;
  }

  /** Drops every entry of one namespace (its documents changed); returns how many. */
  invalidateNamespace(namespace: string): number {
    const size = this.#spaces.get(namespace)?.size ?? 0;
    this.#spaces.delete(namespace);
    return size;
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
  }
}
