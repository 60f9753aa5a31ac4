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
