/**
 * The source of truth: original document texts per namespace. Deletion is
 * either physical or a soft-delete tombstone that live reads no longer see.
 *
 * @module
 */

import { NamespacedRecords, type ReadOptions } from "./_records.ts";
import { type Clock, systemScheduler } from "./scheduler.ts";

export type { ReadOptions } from "./_records.ts";

/** Namespaced source documents. */
export class SourceStore {
  #records: NamespacedRecords<string>;

  constructor(options: { clock?: Clock } = {}) {
    this.#records = new NamespacedRecords(options.clock ?? systemScheduler);
  }

  /** Stores (or replaces) a document. */
  put(namespace: string, id: string, text: string): void {
    this.#records.put(namespace, id, text);
  }

  /** Text of one document, or `undefined` if absent (or tombstoned, unless asked for). */
  get(
    namespace: string,
    id: string,
    options: ReadOptions = {},
  ): string | undefined {
    return this.#records.get(namespace, id, options);
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

  /** Live documents in one namespace (tombstones only if asked for). */
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
