import assert from "node:assert/strict";
import {
  MAX_JSON_DEPTH,
  parseJsonObject,
  parseStrictJson,
  type StrictJsonReason,
} from "../lib/json/strict_json.ts";

function reasonOf(text: string, parse = parseStrictJson): string {
  try {
    parse(text);
  } catch (error) {
    return (error as { reason?: string }).reason ?? "not a StrictJsonError";
  }
  return "accepted";
}

Deno.test("parseStrictJson() agrees with JSON.parse on valid JSON", () => {
  const texts = [
    '{"a":1,"b":[true,false,null],"c":{"d":"e"}}',
    " \t\r\n[ ] ",
    '{"esc":"\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u00e9 \\ud83d\\ude00"}',
    "[0, -0, 1.5, -2e10, 3E-2, 1e+2, 123456789012345678901234567890]",
    '"plain"',
    '"ünïcødé ✓"',
    "null",
    '{"":0,"a":{"a":{"a":[]}}}',
  ];
  for (const text of texts) {
    assert.deepEqual(parseStrictJson(text), JSON.parse(text), text);
  }
});

Deno.test("parseStrictJson() refuses each kind of bad input with its reason", async (t) => {
  const cases: Array<[string, StrictJsonReason]> = [
    ['{"a":1,"a":2}', "duplicate_key"],
    ['{"x":{"a":1,"b":2,"a":1}}', "duplicate_key"],
    ['{"a":NaN}', "non_finite"],
    ['{"a":Infinity}', "non_finite"],
    ['{"a":-Infinity}', "non_finite"],
    ["1e400", "non_finite"],
    ['{"a":1} x', "trailing_data"],
    ['{"a":1}{}', "trailing_data"],
    ["[1,]", "syntax"],
    ['{"a":1,}', "syntax"],
    ["{a:1}", "syntax"],
    ["'a'", "syntax"],
    ["01", "trailing_data"],
    ["1.", "trailing_data"],
    [".5", "syntax"],
    ["+1", "syntax"],
    ["-", "syntax"],
    ['"abc', "syntax"],
    ['"a\nb"', "syntax"],
    ['"\\x41"', "syntax"],
    ['"\\u12G4"', "syntax"],
    ["tru", "syntax"],
    ["", "syntax"],
    ["   ", "syntax"],
    ["[1 2]", "syntax"],
    ['{"a" 1}', "syntax"],
    ["\u00a0{}", "syntax"],
    ["\ufeff{}", "syntax"],
  ];
  for (const [text, reason] of cases) {
    await t.step(JSON.stringify(text), () => {
      assert.equal(reasonOf(text), reason);
    });
  }
});

Deno.test("parseStrictJson() reports the offset of a duplicate key", () => {
  try {
    parseStrictJson('{"a":1, "a":2}');
    assert.fail("accepted a duplicate key");
  } catch (error) {
    assert.equal((error as { offset: number }).offset, 8);
    assert.ok(error instanceof SyntaxError);
  }
});

Deno.test("parseStrictJson() limits nesting depth", () => {
  const nested = (n: number) => "[".repeat(n) + "]".repeat(n);
  assert.deepEqual(reasonOf(nested(MAX_JSON_DEPTH)), "accepted");
  assert.equal(reasonOf(nested(MAX_JSON_DEPTH + 1)), "too_deep");
  assert.equal(reasonOf('{"a":'.repeat(100_000)), "too_deep");
});

Deno.test("parseStrictJson() keeps a __proto__ key as data", () => {
  const value = parseStrictJson('{"__proto__":{"polluted":true}}') as object;
  assert.equal(Object.getPrototypeOf(value), Object.prototype);
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
  assert.deepEqual(Object.keys(value), ["__proto__"]);
  assert.equal(reasonOf('{"__proto__":1,"__proto__":2}'), "duplicate_key");
});

Deno.test("parseStrictJson() parses a 1 MiB document", () => {
  const items = Array.from({ length: 12_000 }, (_, i) => ({
    id: `trace-doc-${i}`,
    text: "x".repeat(40) + "\\n\u00e9",
    n: i * 1.5,
  }));
  const text = JSON.stringify({ items });
  assert.ok(text.length > 1_000_000);
  assert.deepEqual(parseStrictJson(text), JSON.parse(text));
});

Deno.test("parseJsonObject() requires an object at the top level", () => {
  assert.deepEqual(parseJsonObject(' {"a":[1]} '), { a: [1] });
  for (const text of ["[]", '"s"', "1", "null", "true"]) {
    assert.equal(reasonOf(text, parseJsonObject), "not_object", text);
  }
  assert.equal(reasonOf('{"a":1,"a":1}', parseJsonObject), "duplicate_key");
});
