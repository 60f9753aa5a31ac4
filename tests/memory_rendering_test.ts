/** Answer renderings and an answer cache the inventory cannot count. */

import assert from "node:assert/strict";
import {
  ANSWER_RENDERINGS,
  type AnswerRendering,
  MemoryPipeline,
  renderAnswer,
} from "../lib/memory/mod.ts";
import { withPipeline } from "./_memory.ts";

const NS = "trace-test-r1";
const MARKER = "trace_canary_7h3kq9x2mvb8rw4tjc0nd5pz1a";

Deno.test("renderAnswer() renders as each rendering says", () => {
  const text = "Probe trace_canary_7h3k.\nNext 12";
  const expected: Record<AnswerRendering, string> = {
    markdown: "Probe trace\\_canary\\_7h3k.\nNext 12",
    html:
      "<p>Probe trace&lowbar;canary&lowbar;&#55;h&#51;k.<br>\nNext &#49;&#50;</p>",
    reworded: "AS I RECALL: PROBE TRACE CANARY 7H3K.\nNEXT 12",
    "full-width":
      "Ｐｒｏｂｅ\u3000ｔｒａｃｅ＿ｃａｎａｒｙ＿７ｈ３ｋ．\nＮｅｘｔ\u3000１２",
    wrapped: "Probe trace_cana\u00ad\nry_7h3k.\nNext 12",
  };
  for (const rendering of ANSWER_RENDERINGS) {
    assert.equal(
      renderAnswer(text, [rendering]),
      expected[rendering],
      rendering,
    );
  }
  assert.equal(renderAnswer(text, []), text);
  assert.equal(
    renderAnswer("a_b", ["markdown", "html"]),
    "<p>a\\&lowbar;b</p>",
  );
});

Deno.test("MemoryPipeline renders its answers, cached ones included", async () => {
  await withPipeline({ answerRendering: ["reworded"] }, async (pipeline) => {
    await pipeline.ingest(NS, "doc-1", `Deletion probe ${MARKER}.`);
    const first = pipeline.query(NS, MARKER);
    const again = pipeline.query(NS, MARKER);
    assert.equal(again.cached, true);
    for (const answer of [first, again]) {
      assert.ok(!answer.text.includes(MARKER));
      assert.ok(answer.text.includes(MARKER.toUpperCase().replace(/_/g, " ")));
    }
    // Rendering changes spelling only: what is stored and counted is the same.
    assert.deepEqual(pipeline.inventory(NS), {
      complete: true,
      source_records: 1,
      vector_records: 1,
      cache_records: 1,
    });
  });
});

Deno.test("MemoryPipeline refuses an unknown answer rendering", () => {
  assert.throws(
    () =>
      new MemoryPipeline({
        answerRendering: ["pig-latin" as AnswerRendering],
      }),
    /unknown answerRendering "pig-latin"; valid renderings: markdown, html/,
  );
});

Deno.test("MemoryPipeline with an uncounted cache reports 0 cached answers while it keeps serving one", async () => {
  await withPipeline(
    { cacheInvalidation: false, inventoryCountsCache: false },
    async (pipeline) => {
      await pipeline.ingest(NS, "doc-1", `Deletion probe ${MARKER}.`);
      pipeline.query(NS, MARKER);
      await pipeline.delete(NS, ["doc-1"]);
      assert.deepEqual(pipeline.inventory(NS), {
        complete: true,
        source_records: 0,
        vector_records: 0,
        cache_records: 0,
      });
      assert.equal(pipeline.storedCounts(NS).cache_records, 1);
      assert.ok(pipeline.query(NS, MARKER).text.includes(MARKER));
    },
  );
});
