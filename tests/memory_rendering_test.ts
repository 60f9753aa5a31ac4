/** Answer renderings and an answer cache the inventory cannot count. */

import assert from "node:assert/strict";
import {
  ANSWER_RENDERINGS,
  type AnswerRendering,
  MemoryPipeline,
  renderAnswer,
} from "../lib/memory/mod.ts";
import { HOMOGLYPHS } from "../lib/runner/marker/_other_scripts.ts";
import { withPipeline } from "./_memory.ts";

const NS = "trace-test-r1";
const MARKER = "trace_canary_7h3kq9x2mvb8rw4tjc0nd5pz1a";

Deno.test("renderAnswer() renders as each rendering says", () => {
  const text = "Probe trace_canary_7h3k.\nNext 12";
  const expected: Record<AnswerRendering, string> = {
    markdown: "Probe trace\\_canary\\_7h3k.\nNext 12",
    html:
      "<p>Probe trace&lowbar;canary&lowbar;&#55;h&#51;k.<br>\nNext &#49;&#50;</p>",
    "html-named":
      '<span title="memory > answer">&Popf;&ropf;&oopf;&bopf;&eopf; &topf;&ropf;&aopf;&copf;&eopf;_&copf;&aopf;&nopf;&aopf;&ropf;&yopf;_7&hopf;3&kopf;.\n&Nopf;&eopf;&xopf;&topf; 12</span>',
    reworded: "AS I RECALL: PROBE TRACE CANARY 7H3K.\nNEXT 12",
    "full-width":
      "Ｐｒｏｂｅ\u3000ｔｒａｃｅ＿ｃａｎａｒｙ＿７ｈ３ｋ．\nＮｅｘｔ\u3000１２",
    wrapped: "Probe trace_cana\u00ad\nry_7h3k.\nNext 12",
    homoglyphs:
      "\u0420r\u043eb\u0435 tr\u0430\u0441\u0435_\u0441\u0430n\u0430r\u0443_7\u04bb3k.\nN\u0435\u0445t 12",
    "data-uri":
      "attachment: data:text/plain;base64,UHJvYmUgdHJhY2VfY2FuYXJ5XzdoM2suCk5leHQgMTI=",
    hex: "50726f62652074726163655f63616e6172795f3768336b2e0a4e657874203132",
    "spaced-hex":
      "50 72 6f 62 65 20 74 72 61 63 65 5f 63 61 6e 61 72 79 5f 37 68 33 6b 2e 0a 4e 65 78 74 20 31 32",
    hexdump: [
      "00000000  50 72 6f 62 65 20 74 72  61 63 65 5f 63 61 6e 61  |Probe trace_cana|",
      "00000010  72 79 5f 37 68 33 6b 2e  0a 4e 65 78 74 20 31 32  |ry_7h3k..Next 12|",
      "00000020",
    ].join("\n"),
    "od-words": [
      "0000000 7250 626f 2065 7274 6361 5f65 6163 616e",
      "0000020 7972 375f 3368 2e6b 4e0a 7865 2074 3231",
      "0000040",
    ].join("\n"),
    "percent-url": "link: https://example.invalid/search?q=" +
      "%50%72%6F%62%65%20%74%72%61%63%65%5F%63%61%6E%61%72%79%5F%37%68%33%6B%2E%0A%4E%65%78%74%20%31%32",
    "escaped-json": String.raw`record: {"text":"` +
      String
        .raw`\u0050\u0072\u006f\u0062\u0065\u0020\u0074\u0072\u0061\u0063\u0065\u005f\u0063\u0061\u006e\u0061\u0072\u0079\u005f\u0037\u0068\u0033\u006b\u002e\u000a\u004e\u0065\u0078\u0074\u0020\u0031\u0032` +
      '"}',
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

Deno.test("renderAnswer() writes each look-alike the runner's homoglyph table reads back as its letter", () => {
  const letters = Array.from(
    { length: 26 },
    (_, i) => String.fromCharCode(0x61 + i),
  ).join("");
  const latin = letters + letters.toUpperCase();
  const rendered = Array.from(renderAnswer(latin, ["homoglyphs"]));
  assert.equal(rendered.length, latin.length);
  const replaced = rendered.filter((ch, i) => ch !== latin[i]);
  assert.ok(replaced.length >= 20, `only ${replaced.length} letters replaced`);
  rendered.forEach((ch, i) => {
    if (ch !== latin[i]) assert.equal(HOMOGLYPHS[ch], latin[i], ch);
  });
});

Deno.test("renderAnswer() encodings decode back to the answer's text, beyond ASCII too", () => {
  const text = "Café trace_canary_7h3k € 😀\nnext";
  const bytes = (binary: string) =>
    Uint8Array.from(binary, (ch) => ch.charCodeAt(0));
  const utf8 = new TextDecoder("utf-8", { fatal: true });
  const payload = (rendering: AnswerRendering, prefix: string) => {
    const out = renderAnswer(text, [rendering]);
    assert.ok(out.startsWith(prefix), out);
    return out.slice(prefix.length);
  };
  const dataUri = payload("data-uri", "attachment: data:text/plain;base64,");
  assert.equal(utf8.decode(bytes(atob(dataUri))), text);
  const hex = payload("hex", "");
  assert.match(hex, /^(?:[0-9a-f]{2})+$/);
  assert.equal(
    utf8.decode(Uint8Array.from(hex.match(/../g)!, (h) => parseInt(h, 16))),
    text,
  );
  const dump = payload("hexdump", "00000000  ").split("\n");
  // The last line is the offset after the last byte.
  assert.equal(
    dump.at(-1),
    new TextEncoder().encode(text).length.toString(16).padStart(8, "0"),
  );
  const dumped = dump.slice(0, -1).flatMap((line) =>
    line.replace(/^[0-9a-f]{8} {2}/, "").replace(/ +\|.*\|$/, "").split(/ +/)
  ).join("");
  assert.match(dumped, /^(?:[0-9a-f]{2})+$/);
  assert.equal(
    utf8.decode(
      Uint8Array.from(dumped.match(/../g)!, (h) => parseInt(h, 16)),
    ),
    text,
  );
  const words = payload("od-words", "0000000 ").split("\n");
  // An odd length: the last word is padded with a zero byte, the offset after it is exact.
  assert.equal(new TextEncoder().encode(text).length % 2, 1);
  assert.equal(
    words.at(-1),
    new TextEncoder().encode(text).length.toString(8).padStart(7, "0"),
  );
  const swapped = words.slice(0, -1).flatMap((line) =>
    line.replace(/^[0-7]{7} /, "").split(" ").map((word) =>
      word.slice(2) + word.slice(0, 2)
    )
  ).join("");
  assert.match(swapped, /^(?:[0-9a-f]{4})+$/);
  assert.equal(
    utf8.decode(
      Uint8Array.from(swapped.match(/../g)!, (h) => parseInt(h, 16)),
    ),
    `${text}\0`,
  );
  const query = payload(
    "percent-url",
    "link: https://example.invalid/search?q=",
  );
  assert.match(query, /^(?:%[0-9A-F]{2})+$/);
  assert.equal(decodeURIComponent(query), text);
  const record = payload("escaped-json", "record: ");
  assert.match(record, /^\{"text":"(?:\\u[0-9a-f]{4})+"\}$/);
  assert.deepEqual(JSON.parse(record), { text });
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

Deno.test("renderAnswer() html-named keeps a markup character's reference as written", () => {
  assert.equal(
    renderAnswer("a&b<c", ["html-named"]),
    '<span title="memory > answer">&aopf;&amp;&bopf;&lt;&copf;</span>',
  );
});
