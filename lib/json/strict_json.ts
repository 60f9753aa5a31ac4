/**
 * A small strict JSON parser for untrusted input (staging responses, config
 * files). `JSON.parse` silently keeps the last of two duplicate keys, so
 * `{"source_records": 0, "source_records": 3}` would read as 3 here and
 * perhaps as 0 elsewhere; it also cannot bound nesting. This parser follows
 * RFC 8259 and nothing more, and refuses duplicate keys, `NaN` / `Infinity` /
 * out-of-range numbers, trailing data and nesting deeper than
 * {@link MAX_JSON_DEPTH}, each with a stable {@link StrictJsonReason}.
 *
 * @module
 */

import { type Cursor, fail, StrictJsonError } from "./_error.ts";
import { skipSpace } from "./_lexer.ts";
import { readValue } from "./_parser.ts";

export {
  STRICT_JSON_REASONS,
  StrictJsonError,
  type StrictJsonReason,
} from "./_error.ts";

/** Nesting limit: deeper input is refused rather than risking the stack. */
export const MAX_JSON_DEPTH = 64;

/** Parses one JSON value, refusing duplicates, non-finite numbers and trailing data. */
export function parseStrictJson(text: string): unknown {
  const cursor: Cursor = { text, pos: 0 };
  skipSpace(cursor);
  const value = readValue(cursor, 0, MAX_JSON_DEPTH);
  skipSpace(cursor);
  if (cursor.pos < text.length) {
    fail(cursor, "trailing_data", "unexpected data after the value");
  }
  return value;
}

/** Parses strict JSON that must be an object at the top level. */
export function parseJsonObject(text: string): Record<string, unknown> {
  const value = parseStrictJson(text);
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    const detail = "expected a JSON object at the top level";
    throw new StrictJsonError("not_object", detail, 0);
  }
  return value as Record<string, unknown>;
}
