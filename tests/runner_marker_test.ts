/** Markers and how an answer is searched for them: exact, rendered, or not at all. */

import assert from "node:assert/strict";
import {
  ANSWER_RENDERINGS,
  type AnswerRendering,
  renderAnswer,
} from "../lib/memory/mod.ts";
import {
  describeRendering,
  findMarker,
  MARKER_ALPHABET,
  MARKER_PREFIX,
  MARKER_RANDOM_LENGTH,
  newMarker,
  type RenderingTrait,
} from "../lib/runner/marker.ts";
import { newRunIdentifiers } from "../lib/runner/ids.ts";
import { findMarkerInAnswer } from "../lib/runner/answer_marker.ts";

const MARKER = "trace_canary_7h3kq9x2mvb8rw4tjc0nd5pz1a";
const RANDOM = MARKER.slice(MARKER_PREFIX.length);

Deno.test("newMarker() is the prefix and 26 characters of a base32 alphabet without look-alikes", () => {
  assert.equal(MARKER_ALPHABET.length, 32);
  assert.doesNotMatch(MARKER_ALPHABET, /[ilou]/);
  const markers = Array.from({ length: 200 }, newMarker);
  for (const marker of markers) {
    assert.match(marker, /^trace_canary_[0-9a-hjkmnp-tv-z]{26}$/);
  }
  assert.equal(MARKER_RANDOM_LENGTH, 26);
  assert.equal(new Set(markers).size, markers.length);
  // Every symbol is used: the random part is not, say, hex.
  assert.equal(
    new Set(markers.join("").replaceAll(MARKER_PREFIX, "")).size,
    32,
  );
  const ids = newRunIdentifiers(2);
  assert.match(ids.marker, /^trace_canary_[0-9a-z]{26}$/);
  assert.notEqual(ids.marker, ids.controlMarker);
});

Deno.test("findMarker() reports a byte-exact marker as exact", () => {
  assert.deepEqual(findMarker(`Relevant: - probe ${MARKER}.`, MARKER), {
    form: "exact",
    rendering: [],
  });
});

Deno.test("findMarker() recognises a marker rendered or reworded, and says how", async (t) => {
  const cases: [string, string, RenderingTrait[]][] = [
    ["Markdown escapes", "trace\\_canary\\_" + RANDOM, ["markdown_escapes"]],
    ["Markdown emphasis", `**${MARKER}**`.replace(/_/g, "\\_"), [
      "markdown_escapes",
    ]],
    ["named references", `trace&lowbar;canary&UnderBar;${RANDOM}`, [
      "html_entities",
    ]],
    ["numeric references", `trace&#95;canary&#x5F;${RANDOM}`, [
      "html_entities",
    ]],
    [
      "digits as references",
      MARKER.replace(/[0-9]/g, (d) => `&#${d.charCodeAt(0)};`),
      ["html_entities"],
    ],
    ["double-escaped references", `trace&amp;#95;canary&amp;lowbar;${RANDOM}`, [
      "html_entities",
    ]],
    ["upper case", MARKER.toUpperCase(), ["case"]],
    ["other separators", `trace-canary ${RANDOM}`, ["separators"]],
    ["grouped", `trace canary ${RANDOM.match(/.{1,4}/g)!.join("-")}`, [
      "separators",
    ]],
    ["zero-width characters", MARKER.split("").join("\u200b"), [
      "invisible_characters",
    ]],
    [
      "full-width forms",
      [...MARKER].map((ch) => String.fromCharCode(ch.charCodeAt(0) + 0xfee0))
        .join(""),
      ["full_width"],
    ],
    ["a line break inside", `${MARKER.slice(0, 20)}\n${MARKER.slice(20)}`, [
      "line_breaks",
    ]],
    ["look-alike letters", MARKER.replace(/0/g, "o").replace(/1/g, "l"), [
      "look_alikes",
    ]],
    ["without its prefix", `the id ${RANDOM} still answers`, []],
  ];
  for (const [name, rendered, traits] of cases) {
    await t.step(name, () => {
      assert.ok(!rendered.includes(MARKER) || name === "exact", rendered);
      assert.deepEqual(findMarker(`Found: ${rendered}. Done.`, MARKER), {
        form: "rendered",
        rendering: traits,
      });
    });
  }
});

Deno.test("findMarker() finds every rendering a memory pipeline applies, alone and chained", async (t) => {
  const answer =
    `Relevant memories:\n- Synthetic Trace canary record 1 of 3. Deletion probe ${MARKER}.`;
  const chains: AnswerRendering[][] = [
    ...ANSWER_RENDERINGS.map((r) => [r]),
    ["markdown", "html"],
    ["reworded", "wrapped"],
    ["markdown", "full-width"],
  ];
  for (const chain of chains) {
    await t.step(chain.join(" + "), () => {
      const rendered = renderAnswer(answer, chain);
      assert.ok(!rendered.includes(MARKER), rendered);
      assert.equal(findMarker(rendered, MARKER)?.form, "rendered", rendered);
      assert.equal(findMarker(rendered, newMarker()), null);
    });
  }
});

Deno.test("findMarker() never matches part of a marker, another marker, or a changed one", () => {
  const other = newMarker();
  const changed = MARKER.slice(0, -1) + (MARKER.endsWith("a") ? "b" : "a");
  const answers = [
    "No stored memory matches this query",
    `Deletion probe ${other}.`,
    `Deletion probe ${MARKER.slice(0, -1)}.`,
    `Deletion probe ${changed}.`,
    `Deletion probe ${MARKER_PREFIX}.`,
    // Letters inserted inside the random part break it, whatever the separators.
    `${MARKER.slice(0, 25)}x${MARKER.slice(25)}`,
    `${MARKER.slice(0, 25)}&#55;${MARKER.slice(25)}`,
  ];
  for (const answer of answers) {
    assert.equal(findMarker(answer, MARKER), null, answer);
  }
});

Deno.test("describeRendering() words the traits in report order", () => {
  assert.equal(
    describeRendering(["markdown_escapes", "case"]),
    "another case and Markdown escapes",
  );
  assert.equal(describeRendering(["html_entities"]), "HTML entities");
  assert.equal(
    describeRendering(["full_width", "line_breaks", "separators"]),
    "other separators, full-width forms and line breaks",
  );
  assert.equal(describeRendering([]), "another spelling");
});

Deno.test("findMarkerInAnswer() searches text first, then every value and key in order, and names the place by key names only", () => {
  assert.deepEqual(
    findMarkerInAnswer({ sources: [MARKER], text: `x ${MARKER}` }, MARKER),
    { form: "exact", rendering: [], field: "text" },
  );
  assert.equal(
    findMarkerInAnswer({ text: "none", a: [1, null, { b: MARKER }] }, MARKER)
      ?.field,
    "a.2.b",
  );
  assert.equal(
    findMarkerInAnswer({ text: "none", hits: { [RANDOM]: 1 } }, MARKER)?.field,
    "hits.(key)",
  );
  assert.equal(
    findMarkerInAnswer(
      JSON.parse(`{"text":"none","__proto__":{"x y":"${MARKER}"}}`),
      MARKER,
    )?.field,
    "__proto__.*",
  );
  let deep: unknown = MARKER;
  for (const key of "abcdefghij".split("").reverse()) deep = { [key]: deep };
  assert.equal(
    findMarkerInAnswer({ text: "none", deep }, MARKER)?.field,
    "deep.a.b.c.….g.h.i.j",
  );
  assert.equal(
    findMarkerInAnswer({ text: "none", n: 7, ok: true, none: null }, MARKER),
    null,
  );
});

Deno.test("findMarker() recognises a marker broken by markup tags, and says so", async (t) => {
  const cases: [string, string, RenderingTrait[]][] = [
    ["<wbr> every 8 characters", MARKER.replace(/(.{8})/g, "$1<wbr>"), [
      "markup_tags",
    ]],
    [
      "highlighted part",
      `${MARKER.slice(0, 13)}<mark>${MARKER.slice(13, 20)}</mark>${
        MARKER.slice(20)
      }`,
      ["markup_tags"],
    ],
    [
      "a tag with attributes",
      `${MARKER.slice(0, 20)}<span class="hl" data-x='1'>${
        MARKER.slice(20)
      }</span>`,
      ["markup_tags"],
    ],
    ["self-closing", `${MARKER.slice(0, 30)}<br/>${MARKER.slice(30)}`, [
      "markup_tags",
    ]],
    [
      "escaped tags",
      `${MARKER.slice(0, 30)}&lt;wbr&gt;${MARKER.slice(30)}`,
      ["html_entities", "markup_tags"],
    ],
    [
      "tags and upper case",
      `${MARKER.slice(0, 30).toUpperCase()}<strong>${MARKER.slice(30)}`,
      ["case", "markup_tags"],
    ],
  ];
  for (const [name, rendered, traits] of cases) {
    await t.step(name, () => {
      assert.deepEqual(findMarker(`<p>${rendered}</p>`, MARKER), {
        form: "rendered",
        rendering: traits,
      });
    });
  }
  // A tag's letters inside the random part still break another marker.
  assert.equal(findMarker(`<p>${newMarker()}<wbr></p>`, MARKER), null);
  assert.equal(
    findMarker(`${MARKER.slice(0, 30)}<b>x</b>${MARKER.slice(30)}`, MARKER),
    null,
  );
  // `<` that opens no element is text, and its letters still count.
  assert.equal(
    findMarker(`${MARKER.slice(0, 30)}< b>${MARKER.slice(30)}`, MARKER),
    null,
  );
});

Deno.test("findMarker() recognises a marker in text shipped as base64, whole or inside other text", () => {
  const utf8 = (text: string) =>
    btoa(String.fromCharCode(...new TextEncoder().encode(text)));
  for (
    const encoded of [
      utf8(`Synthetic record — deletion probe ${MARKER}.`),
      utf8(`probe ${MARKER}`).replace(/=+$/, ""),
      utf8(`probe ${MARKER.toUpperCase()}`).replace(/\+/g, "-").replace(
        /\//g,
        "_",
      ),
      utf8(`probe ${MARKER} `.repeat(4)).replace(/(.{76})/g, "$1\r\n"),
      `data: ${utf8(`probe ${MARKER}`)}`,
    ]
  ) {
    const found = findMarker(encoded, MARKER);
    assert.equal(found?.form, "rendered", encoded);
    assert.ok(found?.rendering.includes("base64"), encoded);
  }
  assert.deepEqual(findMarker(utf8(`x ${MARKER.toUpperCase()}`), MARKER), {
    form: "rendered",
    rendering: ["case", "base64"],
  });
  // Double-encoded, another marker, or bytes that are not UTF-8.
  assert.equal(findMarker(btoa(utf8(`probe ${MARKER}`)), MARKER), null);
  assert.equal(findMarker(utf8(`probe ${newMarker()}`), MARKER), null);
  assert.equal(
    findMarker(btoa(`\xff\xfe${MARKER}`), MARKER),
    null,
  );
});

Deno.test("findMarkerInAnswer() joins the adjacent strings of one array, and names the array", () => {
  const tokens = MARKER.match(/.{1,3}/g)!;
  assert.deepEqual(findMarkerInAnswer({ text: "", tokens }, MARKER), {
    form: "rendered",
    rendering: ["split_items"],
    field: "tokens",
  });
  assert.deepEqual(
    findMarkerInAnswer({
      text: "none",
      stream: { chunks: [7, ...MARKER.toUpperCase().match(/.{1,5}/g)!, null] },
    }, MARKER),
    {
      form: "rendered",
      rendering: ["case", "split_items"],
      field: "stream.chunks",
    },
  );
  // A whole marker in one item is placed at that item.
  assert.equal(
    findMarkerInAnswer({ text: "", tokens: ["a", MARKER, "b"] }, MARKER)?.field,
    "tokens.1",
  );
  // Strings apart (another value between them) or in two fields are not joined.
  const half = MARKER.length / 2;
  for (
    const answer of [
      { text: "", tokens: [MARKER.slice(0, half), 1, MARKER.slice(half)] },
      { text: "", tokens: [[MARKER.slice(0, half)], [MARKER.slice(half)]] },
      { text: MARKER.slice(0, 20), more: MARKER.slice(20) },
      { text: "", tokens: [MARKER.slice(0, half), newMarker().slice(half)] },
    ]
  ) {
    assert.equal(
      findMarkerInAnswer(answer, MARKER),
      null,
      JSON.stringify(answer),
    );
  }
});

Deno.test("describeRendering() words markup tags, split lists and base64", () => {
  assert.equal(
    describeRendering(["base64", "split_items", "markup_tags"]),
    "markup tags, a split across the strings of a list and base64 encoding",
  );
});
