/**
 * Namespaced id → value records with optional tombstones: the base class of
 * the source store and the vector index, which name their own writes and
 * reads and share the deletion, compaction and listing here. Namespaces are
 * separate maps, so no operation here can reach across namespaces by
 * accident.
 *
 * @module
 */

import { type Clock, systemScheduler } from "./scheduler.ts";

interface StoredRecord<T> {
  value: T;
  /** Epoch ms of a soft delete, `null` while live. */
  deletedAt: number | null;
}

/** Whether a read sees tombstoned records too. */
export interface ReadOptions {
  includeTombstoned?: boolean;
}

/** Options of a store's constructor. */
export interface StoreOptions {
  /** Time source of tombstones (default the system scheduler). */
  clock?: Clock;
}

/** Bytes one record of `id` and `value` holds, for the pipeline's memory bound. */
export type MeasureRecord<T> = (id: string, value: T) => number;

/** Records grouped by namespace. */
export class NamespacedRecords<T> {
  #spaces = new Map<string, Map<string, StoredRecord<T>>>();
  #clock: Clock;
  #measure: MeasureRecord<T>;
  #bytes = 0;

  constructor(measure: MeasureRecord<T>, options: StoreOptions = {}) {
    this.#measure = measure;
    this.#clock = options.clock ?? systemScheduler;
  }

  /** Bytes the records hold (tombstoned ones included), as the store measures them. */
  get bytes(): number {
    return this.#bytes;
  }

  /** Namespaces holding at least one record (live or tombstoned). */
  get namespaceCount(): number {
    return this.#spaces.size;
  }

  /** Whether `namespace` holds any record (live or tombstoned). */
  hasNamespace(namespace: string): boolean {
    return this.#spaces.has(namespace);
  }

  /** Bytes the record under `id` holds (tombstoned included), 0 when there is none: what replacing it frees. */
  recordBytes(namespace: string, id: string): number {
    const record = this.#spaces.get(namespace)?.get(id);
    return record ? this.#measure(id, record.value) : 0;
  }

  /** Stores `value` under `id`, replacing (and reviving) any earlier record. */
  protected putRecord(namespace: string, id: string, value: T): void {
    let space = this.#spaces.get(namespace);
    if (!space) this.#spaces.set(namespace, space = new Map());
    this.#bytes -= this.recordBytes(namespace, id);
    space.set(id, { value, deletedAt: null });
    this.#bytes += this.#measure(id, value);
  }

  /** The value under `id`, or `undefined` if absent (or tombstoned, unless asked for). */
  protected getRecord(
    namespace: string,
    id: string,
    options: ReadOptions = {},
  ): T | undefined {
    const record = this.#spaces.get(namespace)?.get(id);
    return record && visible(record, options) ? record.value : undefined;
  }

  /** Physically deletes the given ids (live or tombstoned); returns those that existed. */
  remove(namespace: string, ids: Iterable<string>): string[] {
    const space = this.#spaces.get(namespace);
    if (!space) return [];
    const removed = [...new Set(ids)].filter((id) => this.#drop(space, id));
    if (space.size === 0) this.#spaces.delete(namespace);
    return removed;
  }

  /** Soft-deletes live records without removing them; returns the ids newly tombstoned. */
  tombstone(namespace: string, ids: Iterable<string>): string[] {
    const space = this.#spaces.get(namespace);
    if (!space) return [];
    const at = this.#clock.now();
    const marked: string[] = [];
    for (const id of new Set(ids)) {
      const record = space.get(id);
      if (record && record.deletedAt === null) {
        record.deletedAt = at;
        marked.push(id);
      }
    }
    return marked;
  }

  /** Purges tombstones older than `before` (epoch ms); returns how many. */
  compact(before: number): number {
    let purged = 0;
    for (const [namespace, space] of this.#spaces) {
      for (const [id, record] of space) {
        if (record.deletedAt !== null && record.deletedAt < before) {
          this.#drop(space, id);
          purged++;
        }
      }
      if (space.size === 0) this.#spaces.delete(namespace);
    }
    return purged;
  }

  /** Live records in one namespace (tombstones only if asked for). */
  count(namespace: string, options: ReadOptions = {}): number {
    let total = 0;
    for (const record of this.#spaces.get(namespace)?.values() ?? []) {
      if (visible(record, options)) total++;
    }
    return total;
  }

  /** Ids in one namespace, in insertion order. */
  ids(namespace: string, options: ReadOptions = {}): string[] {
    return [...this.entries(namespace, options)].map(([id]) => id);
  }

  /** `[id, value]` pairs of one namespace, in insertion order. */
  protected *entries(
    namespace: string,
    options: ReadOptions = {},
  ): IterableIterator<[string, T]> {
    for (const [id, record] of this.#spaces.get(namespace) ?? []) {
      if (visible(record, options)) yield [id, record.value];
    }
  }

  /** Namespaces that hold at least one record (live or tombstoned). */
  namespaces(): string[] {
    return [...this.#spaces.keys()];
  }

  clear(): void {
    this.#spaces.clear();
    this.#bytes = 0;
  }

  /** Deletes one record and its bytes; whether it existed. */
  #drop(space: Map<string, StoredRecord<T>>, id: string): boolean {
    const record = space.get(id);
    if (!record) return false;
    this.#bytes -= this.#measure(id, record.value);
    return space.delete(id);
  }
}

function visible<T>(record: StoredRecord<T>, options: ReadOptions): boolean {
  return record.deletedAt === null || options.includeTombstoned === true;
}
