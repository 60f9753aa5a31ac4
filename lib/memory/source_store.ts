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

/** Bytes a source record of `id` and `text` holds (2 per UTF-16 code unit). */
export function sourceBytes(id: string, text: string): number {
  return 2 * (id.length + text.length);
}

/** Namespaced source documents. */
export class SourceStore extends NamespacedRecords<string> {
  constructor(options: StoreOptions = {}) {
    super(sourceBytes, options);
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
