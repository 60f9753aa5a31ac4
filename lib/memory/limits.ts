/**
 * Bounds on what a memory pipeline holds, so a client cannot grow the
 * process without limit: the demo keeps every record in memory and lives
 * until it is stopped. Checked on ingest, the one operation that adds data.
 *
 * @module
 */

import { TraceError } from "../errors.ts";

/** Most a pipeline holds. */
export interface MemoryLimits {
  /** Namespaces holding any source record (live or tombstoned). */
  namespaces: number;
  /** Source records of one namespace (live or tombstoned). */
  recordsPerNamespace: number;
  /** Bytes of ids, texts and vectors across every namespace (UTF-16 text: 2 per code unit). */
  totalBytes: number;
}

/**
 * Far above what contract runs need: a run writes a few documents into a
 * target and a control namespace, so 10,000 namespaces is some 5,000 runs
 * without a restart and 10,000 records is 100 times any plan's documents.
 * 512 MiB holds about 2,600 documents at the contract's largest text
 * (100,000 characters = 200,000 bytes, plus a 1 KiB vector), or about
 * 400,000 small ones (a 1 KiB vector and some 300 bytes of text and id).
 */
export const DEFAULT_MEMORY_LIMITS: Readonly<MemoryLimits> = Object.freeze({
  namespaces: 10_000,
  recordsPerNamespace: 10_000,
  totalBytes: 512 * 1024 * 1024,
});

/** What a store holds, as {@link checkRoom} reads it. */
export interface HeldRecords {
  /** Whether `namespace` holds a source record already. */
  hasNamespace(namespace: string): boolean;
  /** Namespaces holding a source record. */
  namespaceCount: number;
  /** Source records of `namespace`, tombstones included. */
  recordCount(namespace: string): number;
  /** Whether `id` of `namespace` is held (tombstoned included): a replacement adds no record. */
  hasRecord(namespace: string, id: string): boolean;
  /** Bytes held now. */
  bytes: number;
  /** Bytes a replacement of `id` of `namespace` frees (its source and vector held now; 0 when new). */
  replacedBytes(namespace: string, id: string): number;
}

/** An ingest refused because the pipeline holds its limit. */
export class MemoryFullError extends TraceError {
  /** Which bound was reached. */
  readonly bound: keyof MemoryLimits;

  /** `bound`: which limit the ingest would pass; `message`: what to tell the client. */
  constructor(bound: keyof MemoryLimits, message: string) {
    super("storage", message);
    this.name = "MemoryFullError";
    this.bound = bound;
  }
}

const REMEDY = "delete records (POST /delete) or restart the demo";

/** Throws {@link MemoryFullError} when storing `bytes` more under `namespace`/`id` would pass `limits`. */
export function checkRoom(
  held: HeldRecords,
  limits: Readonly<MemoryLimits>,
  record: { namespace: string; id: string; bytes: number },
): void {
  const { namespace, id, bytes } = record;
  if (
    !held.hasNamespace(namespace) && held.namespaceCount >= limits.namespaces
  ) {
    throw new MemoryFullError(
      "namespaces",
      `Cannot ingest: the memory holds its limit of ${limits.namespaces} namespaces; ${REMEDY}`,
    );
  }
  if (
    !held.hasRecord(namespace, id) &&
    held.recordCount(namespace) >= limits.recordsPerNamespace
  ) {
    throw new MemoryFullError(
      "recordsPerNamespace",
      `Cannot ingest: the namespace holds its limit of ${limits.recordsPerNamespace} records; ${REMEDY}`,
    );
  }
  // A replacement frees what it replaces: at the bound, it still fits when no larger.
  if (
    held.bytes - held.replacedBytes(namespace, id) + bytes > limits.totalBytes
  ) {
    throw new MemoryFullError(
      "totalBytes",
      `Cannot ingest: the memory would pass its limit of ${limits.totalBytes} bytes; ${REMEDY}`,
    );
  }
}
