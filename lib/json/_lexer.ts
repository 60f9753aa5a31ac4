/**
 * Token readers of the strict JSON parser: whitespace, strings, numbers and
 * literals. They work on char codes and slices because config files and
 * responses of up to 1 MiB go through them.
 *
 * @module
 */

import { type Cursor, fail } from "./_error.ts";

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const HEX4 = /^[0-9a-fA-F]{4}$/;
const ESCAPES: Record<string, string> = {
  '"': '"',
  "\\": "\\",
  "/": "/",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
};
const QUOTE = 34;
const BACKSLASH = 92;
const SLASH = 47;
const STAR = 42;

/** Skips JSON whitespace (space, tab, LF and CR only), and comments when the cursor allows them. */
export function skipSpace(cursor: Cursor): void {
  const { text } = cursor;
  let pos = cursor.pos;
  for (;;) {
    let c = text.charCodeAt(pos);
    while (c === 32 || c === 10 || c === 13 || c === 9) {
      c = text.charCodeAt(++pos);
    }
    if (!cursor.comments || c !== SLASH) break;
    const next = text.charCodeAt(pos + 1);
    if (next === SLASH) {
      const end = text.indexOf("\n", pos);
      pos = end === -1 ? text.length : end + 1;
    } else if (next === STAR) {
      const end = text.indexOf("*/", pos + 2);
      if (end === -1) {
        cursor.pos = pos;
        fail(cursor, "syntax", "unterminated comment");
      }
      pos = end + 2;
    } else break;
  }
  cursor.pos = pos;
}

/** Reads a string starting at its opening quote. */
export function readString(cursor: Cursor): string {
  const { text } = cursor;
  let out = "";
  let pos = ++cursor.pos;
  for (;;) {
    let c = text.charCodeAt(pos);
    // Runs of plain characters are copied with one slice, not char by char;
    // NaN (end of text) fails every comparison and ends the run too.
    while (c !== QUOTE && c !== BACKSLASH && c >= 32) {
      c = text.charCodeAt(++pos);
    }
    out += text.slice(cursor.pos, pos);
    cursor.pos = pos;
    if (c === QUOTE) {
      cursor.pos++;
      return out;
    }
    if (c !== BACKSLASH) {
      const detail = Number.isNaN(c)
        ? "unterminated string"
        : "control character in string";
      fail(cursor, "syntax", detail);
    }
    out += readEscape(cursor);
    pos = cursor.pos;
  }
}

function readEscape(cursor: Cursor): string {
  const c = cursor.text[cursor.pos + 1] ?? "";
  const simple = ESCAPES[c];
  if (simple !== undefined) {
    cursor.pos += 2;
    return simple;
  }
  const hex = cursor.text.slice(cursor.pos + 2, cursor.pos + 6);
  if (c !== "u" || !HEX4.test(hex)) fail(cursor, "syntax", "invalid escape");
  cursor.pos += 6;
  return String.fromCharCode(parseInt(hex, 16));
}

/**
 * Reads a number; `NaN`, `Infinity` and out-of-range literals are refused.
 * An integer literal beyond ±(2^53 - 1), which a double would silently
 * round, is refused or kept as a `bigint` when the cursor asks.
 */
export function readNumber(cursor: Cursor): number | bigint {
  for (const word of ["NaN", "Infinity", "-Infinity"]) {
    if (cursor.text.startsWith(word, cursor.pos)) {
      fail(cursor, "non_finite", `${word} is not JSON`);
    }
  }
  NUMBER.lastIndex = cursor.pos;
  const match = NUMBER.exec(cursor.text);
  if (!match) fail(cursor, "syntax", "unexpected character");
  const value = Number(match[0]);
  // Checked first, also for bigints: it bounds the digits BigInt() reads.
  if (!Number.isFinite(value)) {
    fail(cursor, "non_finite", "number out of range");
  }
  const inexact = cursor.exactIntegers !== false &&
    !Number.isSafeInteger(value) && !/[.eE]/.test(match[0]);
  if (inexact && cursor.exactIntegers === true) {
    fail(
      cursor,
      "inexact_integer",
      "integer beyond ±9007199254740991 would lose precision; send it as a string",
    );
  }
  cursor.pos = NUMBER.lastIndex;
  return inexact ? BigInt(match[0]) : value;
}

/** Consumes `word` if the text continues with it. */
export function readLiteral(cursor: Cursor, word: string): boolean {
  if (!cursor.text.startsWith(word, cursor.pos)) return false;
  cursor.pos += word.length;
  return true;
}
