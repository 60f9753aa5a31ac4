/** How error messages echo a user-supplied value. */

import assert from "node:assert/strict";
import { clipValue, ECHO_LIMIT, quoteValue } from "../lib/echo.ts";

Deno.test("clipValue() and quoteValue() keep a value of up to 80 characters whole", () => {
  const edge = "x".repeat(ECHO_LIMIT);
  assert.equal(clipValue(edge), edge);
  assert.equal(quoteValue(edge), `"${edge}"`);
  assert.equal(quoteValue('say "hi"\n'), '"say \\"hi\\"\\n"');
});

Deno.test("clipValue() and quoteValue() cut a longer value to its first 80 characters and its length", () => {
  const value = "y".repeat(ECHO_LIMIT + 1);
  assert.equal(clipValue(value), `${"y".repeat(80)}… (81 characters)`);
  assert.equal(quoteValue(value), `"${"y".repeat(80)}…" (81 characters)`);
});

Deno.test("quoteValue() never cuts a character in half", () => {
  const value = `${"z".repeat(ECHO_LIMIT - 1)}😀${"z".repeat(10)}`;
  const quoted = quoteValue(value);
  assert.equal(quoted, `"${"z".repeat(79)}…" (${value.length} characters)`);
  assert.ok(!/\\ud83d/i.test(quoted), quoted);
});

Deno.test("clipValue() and quoteValue() escape the controls, bidi, zero-width and other format characters a value holds", () => {
  const value = "a\u202Eb\u200Bc\u00ADd\u{E0041}e\nf";
  assert.equal(
    clipValue(value),
    "a\\u{202e}b\\u{200b}c\\u{00ad}d\\u{e0041}e\\u{000a}f",
  );
  const quoted = quoteValue(value);
  assert.equal(quoted, '"a\\u202eb\\u200bc\\u00add\\udb40\\udc41e\\nf"');
  assert.equal(JSON.parse(quoted), value, "still the value, as JSON");
  const long = `\u202E${"w".repeat(ECHO_LIMIT)}`;
  assert.equal(clipValue(long), `\\u{202e}${"w".repeat(79)}… (81 characters)`);
  assert.equal(quoteValue(long), `"\\u202e${"w".repeat(79)}…" (81 characters)`);
  // What is not hidden reads as typed: a path, quotes, letters of any script.
  assert.equal(clipValue("C:\\dir ü 😀 日本"), "C:\\dir ü 😀 日本");
  assert.equal(quoteValue("ü 😀"), '"ü 😀"');
});
