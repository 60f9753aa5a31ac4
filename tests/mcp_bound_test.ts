/** The output bound of MCP answers: pages shrunk to fit, lists cut with a note saying so. */

import assert from "node:assert/strict";
import { boundAnswer, shrinkPageToFit } from "../lib/mcp/_bound.ts";

const ITEM = "x".repeat(100);

Deno.test("boundAnswer() keeps an answer's own truncated field and names its cuts in output_truncated", () => {
  const answer = {
    items: Array.from({ length: 8 }, () => ITEM),
    truncated: true,
    next_offset: 8,
  };
  const cut = boundAnswer(answer, 700) as Record<string, unknown>;
  assert.equal(cut.truncated, true);
  assert.equal(cut.next_offset, 8);
  const truncation = cut.output_truncated as {
    max_chars: number;
    cuts: { path: string; kept: number; total: number }[];
  };
  assert.equal(truncation.max_chars, 700);
  assert.deepEqual(truncation.cuts, [{ path: "items", kept: 2, total: 8 }]);
  assert.ok(JSON.stringify(cut).length <= 700);
});

Deno.test("boundAnswer() says truncated when the answer has no field of that name", () => {
  const cut = boundAnswer(
    { items: Array.from({ length: 8 }, () => ITEM) },
    700,
  ) as Record<string, unknown>;
  assert.equal(cut.output_truncated, undefined);
  const truncation = cut.truncated as { cuts: { path: string }[] };
  assert.deepEqual(truncation.cuts.map((c) => c.path), ["items"]);
});

Deno.test("shrinkPageToFit() halves the page, rounding up, until it fits or holds one item", async () => {
  const asked: number[] = [];
  const answerOf = (size: number) => {
    asked.push(size);
    return { items: Array.from({ length: size }, () => ITEM) };
  };
  const fitted = await shrinkPageToFit(
    { size: 5, answer: answerOf(5), answerOf },
    250,
  );
  assert.deepEqual(asked, [5, 3, 2]);
  assert.equal(fitted.items.length, 2);
  const alone = await shrinkPageToFit(
    { size: 5, answer: answerOf(5), answerOf },
    50,
  );
  assert.equal(alone.items.length, 1, "one item over the bound is kept");
});
