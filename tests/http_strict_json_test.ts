import assert from "node:assert/strict";
import {
  jsonBudget,
  MAX_JSON_DEPTH,
  parseJsonObject,
  parseStrictJson,
  STRICT_JSON_ERROR_CODE,
  StrictJsonError,
  type StrictJsonOptions,
  type StrictJsonReason,
} from "../lib/json/strict_json.ts";
import { exitCodeFor } from "../cli.ts";
import { jsonError } from "../cli/_json.ts";
import { errorResponse } from "../routes/_errors.ts";

function reasonOf(
  text: string,
  parse: (text: string) => unknown = parseStrictJson,
): string {
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
    ["", "empty"],
    ["   ", "empty"],
    ["\n\t\r\n", "empty"],
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

function errorOf(text: string, options?: StrictJsonOptions): StrictJsonError {
  try {
    parseStrictJson(text, options);
  } catch (error) {
    assert.ok(error instanceof StrictJsonError, String(error));
    return error;
  }
  assert.fail(`accepted ${JSON.stringify(text)}`);
}

Deno.test("parseStrictJson() reports the offset of a duplicate key", () => {
  const error = errorOf('{"a":1, "a":2}');
  assert.equal(error.offset, 8);
  assert.ok(error instanceof SyntaxError);
});

Deno.test("parseStrictJson() names the line and column, not a character offset", () => {
  const error = errorOf('{\n  "a": 1,\n  "a": 2\n}');
  assert.deepEqual([error.reason, error.line, error.column], [
    "duplicate_key",
    3,
    3,
  ]);
  assert.equal(
    error.message,
    'Invalid JSON at line 3, column 3: duplicate key "a"',
  );
  assert.doesNotMatch(error.message, /offset/);
  const first = errorOf("x");
  assert.deepEqual([first.line, first.column], [1, 1]);
});

Deno.test("parseStrictJson() names a trailing comma, the usual slip of hand-edited JSON", () => {
  // The position is the comma's, however far the bracket is.
  const member = errorOf('{\n  "a": 1,\n\n}');
  assert.equal(
    member.message,
    'Invalid JSON at line 2, column 9: a comma before "}": JSON allows none after the last member; remove it',
  );
  assert.equal(member.reason, "syntax");
  assert.match(
    errorOf("[1, 2, ]").message,
    /column 6: a comma before "\]": JSON allows none after the last item; remove it$/,
  );
  // A full top-level array with a trailing comma is the comma's fault too.
  assert.match(
    errorOf("[1, 2,]", { maxTopLevelItems: 2 }).message,
    /column 6: a comma before "\]"/,
  );
  // An empty container is not a trailing comma.
  assert.deepEqual(parseStrictJson('{"a": [], "b": {}}'), { a: [], b: {} });
  assert.match(errorOf("{,}").message, /expected a string key/);
});

Deno.test("parseStrictJson() says so when the input is empty", () => {
  for (const text of ["", " \n "]) {
    const error = errorOf(text);
    assert.equal(error.reason, "empty");
    assert.equal(error.message, "Invalid JSON: the input is empty");
  }
});

Deno.test("parseStrictJson() stops at its value budget before building more", () => {
  assert.deepEqual(
    parseStrictJson("[1,[2],{}]", { budget: jsonBudget(5) }),
    [1, [2], {}],
  );
  const error = errorOf("[1,[2],{},3]", { budget: jsonBudget(5) });
  assert.equal(error.reason, "too_many_values");
  assert.equal(error.offset, 10);
  assert.match(error.message, /more than 5 values/);
  // One budget spans several texts, as NDJSON lines share one.
  const shared = jsonBudget(3);
  parseStrictJson("[1]", { budget: shared });
  assert.equal(shared.remaining, 1);
  assert.equal(
    errorOf("[1]", { budget: shared }).reason,
    "too_many_values",
  );
});

Deno.test("parseStrictJson() bounds the top-level array only", () => {
  const options = { maxTopLevelItems: 2 };
  assert.deepEqual(parseStrictJson("[[1,2,3],[4]]", options), [[1, 2, 3], [
    4,
  ]]);
  const error = errorOf("[1,2,3]", options);
  assert.equal(error.reason, "too_many_items");
  assert.equal(error.offset, 5);
  assert.deepEqual(parseStrictJson('{"a":[1,2,3]}', options), { a: [1, 2, 3] });
});

Deno.test("parseStrictJson() refuses integers a double would round, when asked", () => {
  const exact = { exactIntegers: true };
  for (
    const text of [
      "9007199254740993",
      "-9007199254740993",
      "1" + "0".repeat(30),
    ]
  ) {
    assert.equal(errorOf(text, exact).reason, "inexact_integer", text);
    assert.equal(typeof parseStrictJson(text), "number", text);
  }
  for (
    const text of [
      "9007199254740991",
      "-9007199254740991",
      "1e300",
      "1.5",
      "-0",
    ]
  ) {
    assert.equal(typeof parseStrictJson(text, exact), "number", text);
  }
});

Deno.test("parseStrictJson() keeps every digit of integers past 2^53 as bigints, when asked", () => {
  const exact = { exactIntegers: "bigint" } as const;
  assert.deepEqual(
    parseStrictJson(
      '{"t":1700000000123456789,"n":[-9007199254740993,18446744073709551615]}',
      exact,
    ),
    {
      t: 1700000000123456789n,
      n: [-9007199254740993n, 18446744073709551615n],
    },
  );
  // Safe integers stay numbers, fractions and exponents stay doubles, and
  // a literal past the double range is still refused.
  for (const text of ["9007199254740991", "1.5e300", "9007199254740993.0"]) {
    assert.equal(typeof parseStrictJson(text, exact), "number", text);
  }
  assert.equal(errorOf("1" + "0".repeat(400), exact).reason, "non_finite");
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
  assert.equal(reasonOf("", parseJsonObject), "empty");
  assert.equal(reasonOf('{"a":1,"a":1}', parseJsonObject), "duplicate_key");
});

Deno.test("StrictJsonError carries the stable code invalid_json whatever its reason, and stays mapped as an unexpected error", () => {
  for (const text of ["", "{", '{"a":1,"a":2}', "[1] 2"]) {
    const error = errorOf(text);
    assert.ok(error instanceof SyntaxError);
    assert.equal(error.code, "invalid_json");
    assert.equal(error.code, STRICT_JSON_ERROR_CODE);
  }
  const error = errorOf("{");
  // Readers wrap it in an error of their own; one that escapes them is a bug.
  assert.equal(exitCodeFor(error), 2);
  assert.deepEqual(jsonError(error), {
    code: "internal",
    message: error.message,
  });
  const answer = errorResponse(error);
  assert.equal(answer.status, 500);
  assert.deepEqual(answer.body, {
    error: { code: "internal", message: "Internal server error" },
  });
});
