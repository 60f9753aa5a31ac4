/**
 * A small strict JSON parser for untrusted input (staging responses, config
 * files, ingest bodies). `JSON.parse` silently keeps the last of two
 * duplicate keys, so `{"source_records": 0, "source_records": 3}` would read
 * as 3 here and perhaps as 0 elsewhere; it also cannot bound nesting or size.
 * This parser follows RFC 8259 and nothing more, and refuses duplicate keys,
 * `NaN` / `Infinity` / out-of-range numbers, trailing data, empty input and
 * nesting deeper than {@link MAX_JSON_DEPTH}, each with a stable
 * {@link StrictJsonReason} and a line and column. Options bound the number
 * of values built (a budget that NDJSON lines can share), the items of the
 * top-level array, and integers a double cannot hold exactly (refused, or
 * kept as `bigint`); each bound is checked while reading, before anything
 * past it is built.
 *
 * @module
 */

import { type Cursor, fail, type JsonBudget } from "./_error.ts";
import { skipSpace } from "./_lexer.ts";
import { readValue } from "./_parser.ts";

export {
  type JsonBudget,
  positionOf,
  STRICT_JSON_ERROR_CODE,
  STRICT_JSON_REASONS,
  StrictJsonError,
  type StrictJsonReason,
  type TextPosition,
} from "./_error.ts";

/** Nesting limit: deeper input is refused rather than risking the stack. */
export const MAX_JSON_DEPTH = 64;

/** Bounds for {@link parseStrictJson}; all off by default. */
export interface StrictJsonOptions {
  /** Values the text may build (every object, array, string, number and literal counts); reason `too_many_values` past it. */
  budget?: JsonBudget;
  /** Most items of the top-level array; reason `too_many_items` past it. */
  maxTopLevelItems?: number;
  /**
   * Integer literals beyond ±(2^53 - 1), which a double would round: `true`
   * refuses them (reason `inexact_integer`), `"bigint"` hands them back as
   * `bigint` with every digit kept; by default they are rounded as
   * `JSON.parse` rounds them. Literals with a fraction or an exponent are
   * always read as doubles.
   */
  exactIntegers?: boolean | "bigint";
  /** Allow `//` line and block comments between tokens (config files people edit by hand). */
  comments?: boolean;
  /** Nesting limit (default {@link MAX_JSON_DEPTH}); reason `too_deep` past it. */
  maxDepth?: number;
}

/** A budget of `limit` values for {@link StrictJsonOptions.budget}. */
export function jsonBudget(limit: number): JsonBudget {
  return { remaining: limit, limit };
}

/** Parses one JSON value, refusing duplicates, non-finite numbers, empty input and trailing data. */
export function parseStrictJson(
  text: string,
  options: StrictJsonOptions = {},
): unknown {
  const cursor: Cursor = {
    text,
    pos: 0,
    budget: options.budget,
    maxTopLevelItems: options.maxTopLevelItems ?? Infinity,
    exactIntegers: options.exactIntegers ?? false,
    comments: options.comments ?? false,
  };
  skipSpace(cursor);
  if (cursor.pos === text.length) fail(cursor, "empty", "the input is empty");
  const value = readValue(cursor, 0, options.maxDepth ?? MAX_JSON_DEPTH);
  skipSpace(cursor);
  if (cursor.pos < text.length) {
    fail(cursor, "trailing_data", "unexpected data after the value");
  }
  return value;
}

/** Parses strict JSON that must be an object at the top level. */
export function parseJsonObject(
  text: string,
  options: StrictJsonOptions = {},
): Record<string, unknown> {
  const value = parseStrictJson(text, options);
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    const cursor: Cursor = {
      text,
      pos: 0,
      budget: undefined,
      maxTopLevelItems: Infinity,
      exactIntegers: false,
    };
    skipSpace(cursor);
    fail(cursor, "not_object", "expected a JSON object at the top level");
  }
  return value as Record<string, unknown>;
}
