/**
 * Bounds of one ingest batch, shared by every path that decodes one (JSON and
 * NDJSON over HTTP, OTLP, `trace events ingest`). Decoders check them while
 * they read, so a body past a bound is refused before more than the bound is
 * built; {@link BatchTooLargeError} is that refusal (HTTP 413).
 *
 * @module
 */

import { ConfigError } from "../errors.ts";

/** Most events (or OTLP spans) one batch may carry. */
export const MAX_BATCH_EVENTS = 50_000;

/**
 * Most JSON values (objects, arrays, strings, numbers, literals) one ingest
 * body may hold, about 20 per event of a full batch. A body of tiny values
 * (`{"spans":[{},{},…]}`) stops here, having built about 100 MB of objects.
 */
export const MAX_BATCH_JSON_VALUES = 1_000_000;

/** Most refused items a refusal lists; the rest are counted, not listed. */
export const MAX_REPORTED_ISSUES = 100;

/** A batch refused because it is past one of the bounds above; nothing was written. */
export class BatchTooLargeError extends ConfigError {
  /** The bound that was passed. */
  readonly limit: number;

  constructor(message: string, limit: number, options?: ErrorOptions) {
    super(message, options);
    this.name = "BatchTooLargeError";
    this.limit = limit;
  }
}
