/**
 * Namespaced id → value records with optional tombstones, shared by the
 * source store and the vector index. Namespaces are separate maps, so no
 * operation here can reach across namespaces by accident.
 *
 * @module
 */

import type { Clock } from "./scheduler.ts";

interface StoredRecord<T> {
  value: T;
  /** Epoch ms of a soft delete, `null` while live. */
  deletedAt: number | null;
}

/** Whether a read sees tombstoned records too. */
export interface ReadOptions {
  includeTombstoned?: boolean;
}

/** Records grouped by namespace. */
export class NamespacedRecords<T> {
  #spaces = new Map<string, Map<string, StoredRecord<T>>>();
  #clock: Clock;

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** Stores `value` under `id`, replacing (and reviving) any earlier record. */
  put(namespace: string, id: string, value: T): void {
    let space = this.#spaces.get(namespace);
    if (!space) this.#spaces.set(namespace, space = new Map());
    space.set(id, { value, deletedAt: null });
  }

  get(namespace: string, id: string, options: ReadOptions = {}): T | undefined {
    const record = this.#spaces.get(namespace)?.get(id);
    return record && visible(record, options) ? record.value : undefined;
  }

  /** Removes the given ids (live or tombstoned); returns the ids that existed. */
  remove(namespace: string, ids: Iterable<string>): string[] {
    const space = this.#spaces.get(namespace);
    if (!space) return [];
    const removed = [...new Set(ids)].filter((id) => space.delete(id));
    if (space.size === 0) this.#spaces.delete(namespace);
    return removed;
  }

  /** Marks live records as deleted without removing them; returns the ids marked. */
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

  /** Physically removes tombstones older than `before` (epoch ms); returns how many. */
  compact(before: number): number {
    let purged = 0;
    for (const [namespace, space] of this.#spaces) {
      for (const [id, record] of space) {
        if (record.deletedAt !== null && record.deletedAt < before) {
          space.delete(id);
          purged++;
        }
      }
      if (space.size === 0) this.#spaces.delete(namespace);
    }
    return purged;
  }

  count(namespace: string, options: ReadOptions = {}): number {
    let total = 0;
    for (const record of this.#spaces.get(namespace)?.values() ?? []) {
      if (visible(record, options)) total++;
    }
    return total;
  }

  /** `[id, value]` pairs of one namespace, in insertion order. */
  *entries(
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
  }
}

function visible<T>(record: StoredRecord<T>, options: ReadOptions): boolean {
  return record.deletedAt === null || options.includeTombstoned === true;
}
