/**
 * Structure of the strict JSON parser: values, objects and arrays, with
 * duplicate keys, nesting depth, the value budget and the top-level item
 * count checked as they are read, so an oversized text is refused before
 * more than the bound is built.
 *
 * @module
 */

import { type Cursor, fail } from "./_error.ts";
import { quoteValue } from "../echo.ts";
import { readLiteral, readNumber, readString, skipSpace } from "./_lexer.ts";

/** Reads one value at the cursor; `depth` counts enclosing containers. */
export function readValue(
  cursor: Cursor,
  depth: number,
  maxDepth: number,
): unknown {
  const budget = cursor.budget;
  if (budget !== undefined && --budget.remaining < 0) {
    fail(
      cursor,
      "too_many_values",
      `more than ${budget.limit} values (objects, arrays, strings, numbers and literals)`,
    );
  }
  const c = cursor.text[cursor.pos];
  if (c === "{") return readObject(cursor, depth + 1, maxDepth);
  if (c === "[") return readArray(cursor, depth + 1, maxDepth);
  if (c === '"') return readString(cursor);
  if (readLiteral(cursor, "true")) return true;
  if (readLiteral(cursor, "false")) return false;
  if (readLiteral(cursor, "null")) return null;
  return readNumber(cursor);
}

function readObject(
  cursor: Cursor,
  depth: number,
  maxDepth: number,
): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  if (open(cursor, depth, maxDepth, "}")) return result;
  let comma = -1;
  do {
    skipSpace(cursor);
    if (cursor.text[cursor.pos] === "}") trailingComma(cursor, comma, "}");
    if (cursor.text[cursor.pos] !== '"') {
      fail(cursor, "syntax", "expected a string key");
    }
    const keyAt = cursor.pos;
    const key = readString(cursor);
    if (Object.hasOwn(result, key)) {
      cursor.pos = keyAt;
      fail(cursor, "duplicate_key", `duplicate key ${quoteValue(key)}`, key);
    }
    skipSpace(cursor);
    if (cursor.text[cursor.pos] !== ":") fail(cursor, "syntax", 'expected ":"');
    cursor.pos++;
    skipSpace(cursor);
    const value = readValue(cursor, depth, maxDepth);
    // Assigning "__proto__" would set the prototype; JSON.parse keeps it as data.
    if (key === "__proto__") {
      Object.defineProperty(result, key, {
        value,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    } else {
      result[key] = value;
    }
  } while ((comma = separator(cursor, "}")) >= 0);
  return result;
}

function readArray(
  cursor: Cursor,
  depth: number,
  maxDepth: number,
): unknown[] {
  const result: unknown[] = [];
  if (open(cursor, depth, maxDepth, "]")) return result;
  const maxItems = depth === 1 ? cursor.maxTopLevelItems : Infinity;
  let comma = -1;
  do {
    skipSpace(cursor);
    if (cursor.text[cursor.pos] === "]") trailingComma(cursor, comma, "]");
    if (result.length >= maxItems) {
      fail(cursor, "too_many_items", `more than ${maxItems} items`);
    }
    result.push(readValue(cursor, depth, maxDepth));
  } while ((comma = separator(cursor, "]")) >= 0);
  return result;
}

/**
 * A container closed right after a comma: hand-edited JSON (a config) most
 * often breaks this way, so the message names the comma rather than what
 * was expected instead of the bracket.
 */
function trailingComma(
  cursor: Cursor,
  comma: number,
  close: "}" | "]",
): never {
  cursor.pos = comma;
  fail(
    cursor,
    "syntax",
    `a comma before "${close}": JSON allows none after the last ${
      close === "}" ? "member" : "item"
    }; remove it`,
  );
}

/** Enters a container; true (and consumed) when it is empty. */
function open(
  cursor: Cursor,
  depth: number,
  maxDepth: number,
  close: string,
): boolean {
  if (depth > maxDepth) {
    fail(cursor, "too_deep", `nesting deeper than ${maxDepth}`);
  }
  cursor.pos++;
  skipSpace(cursor);
  if (cursor.text[cursor.pos] !== close) return false;
  cursor.pos++;
  return true;
}

/** After a member: the offset of a "," (consumed), -1 on `close`, otherwise a syntax error. */
function separator(cursor: Cursor, close: string): number {
  skipSpace(cursor);
  const at = cursor.pos;
  const c = cursor.text[at];
  if (c !== "," && c !== close) {
    fail(cursor, "syntax", `expected "," or "${close}"`);
  }
  cursor.pos++;
  return c === "," ? at : -1;
}
