/**
 * The source of truth: original document texts per namespace. Deletion is
 * either physical or a soft-delete tombstone that live reads no longer see.
 *
 * @module
 */

import {
  NamespacedRecords,
  type ReadOptions,
  type StoreOptions,
} from "./_records.ts";

export type { ReadOptions } from "./_records.ts";

/** Namespaced source documents. */
export class SourceStore extends NamespacedRecords<string> {
  constructor(options: StoreOptions = {}) {
    // JavaScript strings hold 2 bytes per UTF-16 code unit.
    super((id, text) => 2 * (id.length + text.length), options);
  }

  /** Stores (or replaces) a document. */
  put(namespace: string, id: string, text: string): void {
    this.putRecord(namespace, id, text);
  }

  /** Text of one document, or `undefined` if absent (or tombstoned, unless asked for). */
  get(
    namespace: string,
    id: string,
    options: ReadOptions = {},
  ): string | undefined {
    return this.getRecord(namespace, id, options);
  }
}
