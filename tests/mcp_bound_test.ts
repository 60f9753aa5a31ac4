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
    { list: "items", size: 5, answer: answerOf(5), answerOf },
    250,
  ) as { items: string[] };
  assert.deepEqual(asked, [5, 3, 2]);
  assert.equal(fitted.items.length, 2);
});

Deno.test("shrinkPageToFit() keeps one item over the bound alone and cuts inside it, so the next offset skips nothing", async () => {
  const answerOf = (size: number) => ({
    items: Array.from({ length: size }, (_, i) => ({
      id: i,
      tags: Array.from({ length: 8 }, () => "t".repeat(40)),
    })),
    truncated: size < 3,
    next_offset: size < 3 ? size : null,
  });
  const alone = await shrinkPageToFit(
    { list: "items", size: 3, answer: answerOf(3), answerOf },
    400,
  ) as Record<string, unknown>;
  assert.ok(JSON.stringify(alone).length <= 400);
  const items = alone.items as { id: number; tags: string[] }[];
  assert.deepEqual(items.map((item) => item.id), [0], "the item is kept");
  assert.ok(items[0]!.tags.length < 8);
  assert.equal(alone.next_offset, 1, "the next page starts right after it");
  assert.equal(alone.truncated, true, "the page's own truncated stays boolean");
  const cut = alone.output_truncated as { cuts: { path: string }[] };
  assert.deepEqual(cut.cuts.map((c) => c.path), ["items[0].tags"]);
});

Deno.test("shrinkPageToFit() cuts the entries of an item the rules name, never the page's list", async () => {
  const answerOf = (size: number) => ({
    runs: Array.from({ length: size }, (_, i) => ({
      id: `run-${i}`,
      a: "a".repeat(200),
      b: "b".repeat(200),
    })),
  });
  const alone = await shrinkPageToFit(
    { list: "runs", size: 2, answer: answerOf(2), answerOf },
    300,
    { cutsEntries: (path) => path === "runs[0]", note: "cut" },
  ) as Record<string, unknown>;
  assert.deepEqual(alone.runs, [{ id: "run-0" }]);
  assert.deepEqual(alone.truncated, {
    max_chars: 300,
    cuts: [{ path: "runs[0]", kept: 1, total: 3 }],
    note: "cut",
  });
});

Deno.test("boundAnswer() returns an answer already cut at the same bound as it is", () => {
  const answer = { items: [ITEM, ITEM, ITEM], truncated: false };
  const cut = boundAnswer(answer, 200);
  assert.ok("output_truncated" in cut && "error" in cut, "nothing fits");
  assert.ok(JSON.stringify(cut).length > 200);
  assert.equal(boundAnswer(cut, 200), cut);
  assert.notEqual(boundAnswer(cut, 100), cut, "another bound cuts again");
});
