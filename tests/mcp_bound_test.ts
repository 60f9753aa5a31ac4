/** The output bound of MCP answers: pages shrunk to fit, lists cut with a note saying so. */

import assert from "node:assert/strict";
import * as v from "valibot";
import {
  boundAnswer,
  type Cut,
  MIN_OUTPUT_CHARS,
  minimalAnswer,
  outputBound,
  shrinkPageToFit,
} from "../lib/mcp/_bound.ts";
import { clientAnswer } from "../lib/mcp/_remote_text.ts";
import { callTool } from "../lib/mcp/server.ts";
import { READS, type TraceTool } from "../lib/mcp/_tool.ts";
import type { McpToolContext } from "../lib/mcp/context.ts";

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

Deno.test("boundAnswer() cuts lists inside lists and a list at two paths as each cut leaves them", () => {
  const items = (length: number) => Array.from({ length }, () => ITEM);
  type Cuts = { truncated: { cuts: Cut[] } };
  const shared = items(6);
  const inner = boundAnswer(
    {
      runs: [{ samples: items(8), tags: ["a", "b"] }, { samples: items(2) }],
      first: shared,
      again: shared,
    },
    1_050,
    { keepsWhole: (path) => path === "runs" },
  ) as Cuts & { runs: { samples: string[] }[]; first: []; again: [] };
  assert.deepEqual(inner.truncated.cuts, [
    { path: "runs[0].samples", kept: 2, total: 8 },
    { path: "first", kept: 1, total: 6 },
  ]);
  assert.deepEqual(inner.runs.map((run) => run.samples.length), [2, 2]);
  assert.deepEqual([inner.first.length, inner.again.length], [1, 1]);
  // The lists in the items cut go with them: none is named as cut.
  const outer = boundAnswer({
    runs: [0, 1, 2].map((id) => ({ id, samples: items(6) })),
    first: shared.slice(0, 4),
  }, 600) as Cuts;
  assert.deepEqual(outer.truncated.cuts, [
    { path: "runs", kept: 0, total: 3 },
    { path: "first", kept: 2, total: 4 },
  ]);
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

/** Answers of a few shapes, each too long for the smaller bounds. */
function shapes(): Record<string, object> {
  const tags = () => Array.from({ length: 6 }, (_, i) => `tag-${i}`.repeat(5));
  return {
    list: { items: Array.from({ length: 9 }, () => ITEM) },
    page: {
      items: Array.from({ length: 5 }, (_, id) => ({ id, tags: tags() })),
      truncated: true,
      next_offset: 5,
    },
    cursor: {
      events: Array.from({ length: 4 }, (_, id) => ({
        id,
        resources: tags(),
        attributes: { a: ITEM, b: ITEM },
      })),
      next_cursor: "c".repeat(40),
    },
    // Many small lists, none of which helps: the cut list is long itself.
    nothing: {
      text: "t".repeat(120),
      ...Object.fromEntries(
        Array.from({ length: 30 }, (_, i) => [`list_${i}`, [i, i + 1]]),
      ),
    },
    said: {
      items: Array.from({ length: 9 }, () => ITEM),
      truncated: { max_chars: 300, cuts: [], note: "not from this bound" },
    },
  };
}

Deno.test("boundAnswer() returns answers that fit the bound, or the minimal answer below MIN_OUTPUT_CHARS, and bounding again returns them as they are", async (t) => {
  for (const [name, answer] of Object.entries(shapes())) {
    await t.step(name, () => {
      for (let maxChars = 150; maxChars <= 1_000; maxChars += 7) {
        const bounded = boundAnswer(answer, maxChars);
        const length = JSON.stringify(bounded).length;
        if (length > maxChars) {
          assert.ok(maxChars < MIN_OUTPUT_CHARS, `${name} at ${maxChars}`);
          const key = "truncated" in answer ? "output_truncated" : "truncated";
          assert.deepEqual(bounded, minimalAnswer(maxChars, key));
        } else {
          assert.equal(boundAnswer(bounded, maxChars), bounded, "fits again");
        }
      }
    });
  }
});

Deno.test("minimalAnswer() fits MIN_OUTPUT_CHARS, whatever the key", () => {
  for (const key of ["truncated", "output_truncated"] as const) {
    const minimal = JSON.stringify(minimalAnswer(MIN_OUTPUT_CHARS, key));
    assert.ok(minimal.length <= MIN_OUTPUT_CHARS, minimal);
  }
});

Deno.test("boundAnswer() cuts an answer over the bound even when it already carries a truncation at that bound", () => {
  const answer = {
    items: Array.from({ length: 9 }, () => ITEM),
    truncated: { max_chars: 400, cuts: [], note: "said by the tool" },
  };
  const bounded = boundAnswer(answer, 400) as Record<string, unknown>;
  assert.ok(JSON.stringify(bounded).length <= 400);
  assert.deepEqual(bounded.truncated, answer.truncated, "the tool's own field");
  const cut = bounded.output_truncated as { cuts: { path: string }[] };
  assert.deepEqual(cut.cuts.map((c) => c.path), ["items"]);
});

Deno.test("boundAnswer() keeps a page's truncated, next_offset and next_cursor when nothing else fits, and lists only the cuts that fit", () => {
  const answer = {
    text: "t".repeat(400),
    ...Object.fromEntries(
      Array.from({ length: 30 }, (_, i) => [`list_${i}`, [i, i + 1]]),
    ),
    truncated: true,
    next_offset: 1,
    next_cursor: "cursor-1",
  };
  const bounded = boundAnswer(answer, 320) as Record<string, unknown>;
  assert.ok(JSON.stringify(bounded).length <= 320);
  assert.equal(bounded.truncated, true);
  assert.equal(bounded.next_offset, 1);
  assert.equal(bounded.next_cursor, "cursor-1");
  assert.equal(typeof bounded.error, "string");
  const cut = bounded.output_truncated as { cuts: { path: string }[] };
  assert.ok(cut.cuts.length > 0 && cut.cuts.length < 30, `${cut.cuts.length}`);
  assert.ok(cut.cuts.every((c) => c.path.startsWith("list_")));
});

Deno.test("boundAnswer() measures what rules.present gives and returns the answer unpresented", () => {
  const answer = { items: Array.from({ length: 4 }, () => ITEM) };
  const present = (value: object) => ({ ...value, padding: "x".repeat(120) });
  const bounded = boundAnswer(answer, 500, { present, note: "cut" });
  assert.ok(JSON.stringify(answer).length <= 500, "fits unpresented");
  assert.notEqual(bounded, answer, "the presented answer is too long");
  assert.ok(JSON.stringify(present(bounded)).length <= 500);
  assert.equal("padding" in bounded, false);
  assert.ok("truncated" in bounded && !("error" in bounded), "a list was cut");
  assert.equal(boundAnswer(answer, 600, { present }), answer);
});

Deno.test("callTool() bounds a remote answer as the client receives it, and a paging tool's page is never cut after it was measured", async () => {
  const dataDir = "/d";
  // Each item names the data directory, which a remote client reads as words: longer.
  const answerOf = (size: number) => ({
    items: Array.from({ length: size }, (_, id) => ({ id, dir: dataDir })),
    truncated: size < 20,
    next_offset: size < 20 ? size : null,
  });
  const context = {
    dataDir,
    remote: true,
    maxOutputChars: 900,
  } as unknown as McpToolContext;
  assert.ok(JSON.stringify(answerOf(20)).length <= 900, "fits before rewrite");
  const tool: TraceTool = {
    name: "trace.test_pages",
    title: "Pages",
    description: "Pages",
    input: v.object({}),
    annotations: READS,
    call: (_args, called) =>
      shrinkPageToFit(
        { list: "items", size: 20, answer: answerOf(20), answerOf },
        900,
        { present: (answer) => clientAnswer(answer, called) },
      ),
  };
  const result = await callTool(
    new Map([[tool.name, tool]]),
    tool.name,
    {},
    context,
  );
  const text = (result.content[0] as { text: string }).text;
  assert.ok(text.length <= 900, `${text.length}`);
  const page = JSON.parse(text) as Record<string, unknown>;
  const items = page.items as { id: number; dir: string }[];
  assert.ok(items.length < 20, "the page shrank");
  assert.equal(page.next_offset, items.length, "the next page skips nothing");
  assert.equal(page.truncated, true);
  assert.equal(page.output_truncated, undefined, "no list was cut");
  assert.equal(items[0]!.dir, "the server's data directory");
});

Deno.test("a page whose one item cannot be shown says it was left out before its next offset goes past it", async () => {
  // The note repeats on every page, so even one run does not fit.
  const pageOf = (size: number) => ({
    runs: [{ run_id: "run-1" }, { run_id: "run-2" }].slice(0, size),
    truncated: size < 2,
    next_offset: size < 2 ? size : null,
    note: "n".repeat(400),
  });
  const bounded = await shrinkPageToFit({
    list: "runs",
    size: 2,
    answer: pageOf(2),
    answerOf: pageOf,
  }, 300) as Record<string, unknown>;
  assert.ok(JSON.stringify(bounded).length <= 300);
  assert.equal(bounded.next_offset, 1);
  assert.equal(bounded.truncated, true);
  const cut = bounded.output_truncated as { cuts: unknown[] };
  assert.deepEqual(cut.cuts[0], { path: "runs", kept: 0, total: 1 });
});

Deno.test("outputBound() raises a bound below MIN_OUTPUT_CHARS to it and keeps the default otherwise", () => {
  assert.equal(outputBound(100), MIN_OUTPUT_CHARS);
  assert.equal(outputBound(300), 300);
  assert.equal(outputBound(undefined), 60_000);
});
