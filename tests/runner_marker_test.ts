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
  findMarkerInAnswer,
  foldForMatching,
  MARKER_ALPHABET,
  MARKER_PREFIX,
  MARKER_RANDOM_LENGTH,
  newMarker,
  type RenderingTrait,
} from "../lib/runner/marker/mod.ts";
import { newRunIdentifiers } from "../lib/runner/ids.ts";

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
    [
      "mathematical bold digits",
      MARKER.replace(/[0-9]/g, (d) => String.fromCodePoint(0x1d7ce + +d)),
      ["compatibility_forms"],
    ],
    [
      "mathematical bold letters",
      MARKER.replace(
        /[a-z]/g,
        (ch) => String.fromCodePoint(0x1d41a + ch.charCodeAt(0) - 0x61),
      ),
      ["compatibility_forms"],
    ],
    [
      "circled and superscript digits",
      MARKER.replace(/1/g, "\u2460").replace(/2/g, "\u00b2"),
      ["compatibility_forms"],
    ],
    [
      "mathematical capitals and full-width digits",
      MARKER.toUpperCase().replace(
        /[A-Z0-9]/g,
        (ch) =>
          /[0-9]/.test(ch)
            ? String.fromCharCode(ch.charCodeAt(0) + 0xfee0)
            : String.fromCodePoint(0x1d400 + ch.charCodeAt(0) - 0x41),
      ),
      ["case", "full_width", "compatibility_forms"],
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

/** Latin letters and digits of the marker, written with Cyrillic or Greek look-alikes. */
const CYRILLIC: Record<string, string> = {
  a: "\u0430",
  c: "\u0441",
  e: "\u0435",
  p: "\u0440",
  x: "\u0445",
  y: "\u0443",
  s: "\u0455",
  j: "\u0458",
  h: "\u04bb",
  d: "\u0501",
  q: "\u051b",
  w: "\u051d",
  "0": "\u043e",
  "3": "\u0417",
  "6": "\u0431",
};
const GREEK: Record<string, string> = {
  a: "\u03b1",
  e: "\u03b5",
  k: "\u03ba",
  n: "\u03b7",
  p: "\u03c1",
  t: "\u03c4",
  v: "\u03bd",
  x: "\u03c7",
  y: "\u03b3",
  "0": "\u03bf",
  "1": "\u03b9",
};
const spell = (text: string, table: Record<string, string>) =>
  Array.from(text, (ch) => table[ch] ?? ch).join("");

/**
 * Each case's spelling of the marker is read as it, rendered with the given
 * traits, and no other marker is read in it.
 */
async function stepRenderedCases(
  t: Deno.TestContext,
  cases: readonly [string, string, RenderingTrait[]][],
): Promise<void> {
  for (const [name, rendered, traits] of cases) {
    await t.step(name, () => {
      assert.ok(!rendered.includes(MARKER), rendered);
      assert.deepEqual(findMarker(`Found: ${rendered}. Done.`, MARKER), {
        form: "rendered",
        rendering: traits,
      });
      assert.equal(findMarker(rendered, newMarker()), null);
    });
  }
}

Deno.test("findMarker() reads Cyrillic and Greek look-alikes as the Latin letters they pass for", async (t) => {
  const cases: [string, string, RenderingTrait[]][] = [
    ["Cyrillic letters", spell(MARKER, CYRILLIC), [
      "look_alikes",
      "homoglyphs",
    ]],
    ["Greek letters", spell(MARKER, GREEK), ["look_alikes", "homoglyphs"]],
    [
      "Cyrillic capitals",
      MARKER.toUpperCase().replace(/[ACEKMOPTX]/g, (ch) =>
        String.fromCharCode(
          {
            A: 0x410,
            C: 0x421,
            E: 0x415,
            K: 0x41a,
            M: 0x41c,
            O: 0x41e,
            P: 0x420,
            T: 0x422,
            X: 0x425,
          }[ch]!,
        )),
      ["case", "homoglyphs"],
    ],
    [
      "one letter of the random part",
      MARKER.replace("q", "\u051b"),
      ["homoglyphs"],
    ],
  ];
  await stepRenderedCases(t, cases);
  assert.equal(
    describeRendering(["homoglyphs"]),
    "look-alike letters of another script or small capitals",
  );
});

Deno.test("findMarker() reads accented and stroked letters as their base letters, and enclosed and regional-indicator letters as the letters they enclose", async (t) => {
  const accented = MARKER.replace(/[a-z]/g, (ch) => `${ch}\u0301`);
  const enclosed = (first: number, between = "") =>
    Array.from(
      MARKER,
      (ch) =>
        /[a-z]/.test(ch)
          ? String.fromCodePoint(first + ch.charCodeAt(0) - 0x61) + between
          : ch,
    ).join("");
  const cases: [string, string, RenderingTrait[]][] = [
    // NFC composes each letter and its accent into one character (ḱ, ǵ…).
    ["every letter accented, composed (NFC)", accented.normalize("NFC"), [
      "diacritics",
    ]],
    ["every letter accented, decomposed (NFD)", accented.normalize("NFD"), [
      "diacritics",
    ]],
    ["one accented letter", MARKER.replace("k", "\u1e31"), ["diacritics"]],
    // Stroked letters have no decomposition: a table reads them.
    [
      "stroked letters",
      MARKER.replace("d", "\u0111").replace("h", "\u0127"),
      ["diacritics"],
    ],
    // The letter under the accent is itself a look-alike (Cyrillic ё).
    ["an accented look-alike", MARKER.replace("e", "\u0451"), [
      "homoglyphs",
      "diacritics",
    ]],
    // A variation selector after a letter chooses a glyph: no accent.
    ["variation selectors", MARKER.replace(/[a-z]/g, (ch) => `${ch}\ufe0f`), [
      "invisible_characters",
    ]],
    ["negative circled letters", enclosed(0x1f150), [
      "case",
      "enclosed_letters",
    ]],
    ["negative squared letters", enclosed(0x1f170), [
      "case",
      "enclosed_letters",
    ]],
    // Between the indicators, as a spelling that keeps them apart would put it.
    ["regional indicators", enclosed(0x1f1e6, "\u200b"), [
      "case",
      "invisible_characters",
      "enclosed_letters",
    ]],
  ];
  await stepRenderedCases(t, cases);
  assert.equal(
    describeRendering(["diacritics", "enclosed_letters"]),
    "enclosed or regional-indicator letters and letters with accents, other marks or a stroke",
  );
});

Deno.test("findMarker() reads the decimal digits of other scripts as ASCII digits", async (t) => {
  const inScript = (zero: number) =>
    MARKER.replace(/[0-9]/g, (d) => String.fromCodePoint(zero + Number(d)));
  const scripts: [string, number][] = [
    ["Arabic-Indic", 0x0660],
    ["Extended Arabic-Indic", 0x06f0],
    ["Devanagari", 0x0966],
    ["Bengali", 0x09e6],
    ["Thai", 0x0e50],
    ["Myanmar Shan", 0x1090],
    ["Adlam", 0x1e950],
  ];
  for (const [name, zero] of scripts) {
    await t.step(name, () => {
      assert.deepEqual(findMarker(`id ${inScript(zero)} stored`, MARKER), {
        form: "rendered",
        rendering: ["digit_scripts"],
      });
    });
  }
  // Each digit's value, not just its place in a block of several scripts' digits.
  assert.equal(
    findMarker(inScript(0x0660).replace("\u0667", "\u0668"), MARKER),
    null,
  );
  assert.equal(
    describeRendering(["digit_scripts"]),
    "digits of another script",
  );
});

Deno.test("findMarker() matches no marker in ordinary Cyrillic, Greek or other-script text", () => {
  const marker = newMarker();
  const answers = [
    "Привет! Это обычный ответ о погоде: сегодня ясно, завтра дождь, 12 °C.",
    "Ссылка на запись удалена; похожих воспоминаний нет. Спасибо за вопрос.",
    "Η απάντηση δεν περιέχει κανένα αποθηκευμένο κείμενο, ευχαριστούμε πολύ.",
    "रिकॉर्ड ३४५६ हटाया गया; संदर्भ १२ पर कोई स्मृति नहीं मिली।",
    "السجل ٣٤٥٦ محذوف؛ لا توجد ذكريات مطابقة للمرجع ١٢٣٤٥٦٧٨٩٠.",
    spell(`trace_canary_ ${"ассерху".repeat(8)}`, CYRILLIC),
  ];
  for (const answer of answers) {
    assert.equal(findMarker(answer, marker), null, answer);
    assert.equal(findMarker(answer, MARKER), null, answer);
  }
});

Deno.test("foldForMatching() drops what other scripts write unless it reads as Latin", () => {
  assert.equal(
    foldForMatching(
      "\u0130stanbul \u041f\u0440\u0438\u0432\u0435\u0442 \u65e5\u672c \u0663 \u03a3 \ud835\udfd8",
    )
      .folded,
    // İ lower-cases to i and a combining dot; р and е are look-alikes; ٣ and 𝟘 are digits.
    "1stanbu1pe30",
  );
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
  assert.equal(
    describeRendering(["compatibility_forms", "full_width"]),
    "full-width forms and Unicode compatibility forms",
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
  // Double-encoded, or another marker.
  assert.equal(findMarker(btoa(utf8(`probe ${MARKER}`)), MARKER), null);
  assert.equal(findMarker(utf8(`probe ${newMarker()}`), MARKER), null);
  // Bytes that are no text before it hide nothing after them.
  assert.deepEqual(findMarker(btoa(`\xff\xfe${MARKER}`), MARKER), {
    form: "rendered",
    rendering: ["base64"],
  });
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
  // Strings apart (another value between them) or in two arrays are not joined.
  const half = MARKER.length / 2;
  for (
    const answer of [
      { text: "", tokens: [MARKER.slice(0, half), 1, MARKER.slice(half)] },
      { text: "", tokens: [[MARKER.slice(0, half)], [MARKER.slice(half)]] },
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

Deno.test("findMarkerInAnswer() joins the string values of one object adjacent in its key order, and names the object", () => {
  const split = {
    form: "rendered",
    rendering: ["split_items"],
  } as const;
  // Chunks stored as fields of the answer itself, `text` among them.
  assert.deepEqual(
    findMarkerInAnswer({
      chunk_0: `Deletion probe ${MARKER.slice(0, 25)}`,
      chunk_1: `${MARKER.slice(25)} more`,
    }, MARKER),
    { ...split, field: "(answer)" },
  );
  assert.deepEqual(
    findMarkerInAnswer(
      { text: MARKER.slice(0, 20), more: MARKER.slice(20) },
      MARKER,
    ),
    { ...split, field: "(answer)" },
  );
  // A nested object, over two fields and over three.
  assert.deepEqual(
    findMarkerInAnswer({
      text: { part1: `… ${MARKER.slice(0, 30)}`, part2: MARKER.slice(30) },
    }, MARKER),
    { ...split, field: "text" },
  );
  assert.deepEqual(
    findMarkerInAnswer({
      text: "none",
      sources: [{
        id: 7,
        content: {
          a: MARKER.slice(0, 15).toUpperCase(),
          b: MARKER.slice(15, 28).toUpperCase(),
          c: `${MARKER.slice(28).toUpperCase()}.`,
        },
      }],
    }, MARKER),
    {
      form: "rendered",
      rendering: ["case", "split_items"],
      field: "sources.0.content",
    },
  );
  // JSON.parse orders keys that are array indexes first, by their number.
  assert.equal(
    findMarkerInAnswer(
      JSON.parse(
        `{"text":"none","doc":{"1":"${MARKER.slice(20)}","0":"${
          MARKER.slice(0, 20)
        }"}}`,
      ),
      MARKER,
    )?.field,
    "doc",
  );
  // Halves in two objects, apart in one, split between a key and its value,
  // or between an array and the field after it are not joined.
  const half = MARKER.length / 2;
  const [head, tail] = [MARKER.slice(0, half), MARKER.slice(half)];
  for (
    const answer of [
      { text: "", parts: [{ a: head }, { a: tail }] },
      { text: "", a: { x: head }, b: { y: tail } },
      { text: "", doc: { a: head, n: 1, b: tail } },
      { text: "", doc: { a: head, b: null, c: tail } },
      { text: "", doc: { [head]: tail } },
      { text: "", doc: { a: [head], b: tail } },
      { text: "", doc: { a: head, b: newMarker().slice(half) } },
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
    "markup tags, a split across adjacent list items or object fields and base64 encoding",
  );
});

Deno.test("text without character references folds as the unit by unit reading does, renderings included", () => {
  // Appending `&` sends the same text through the reading that decodes
  // references one unit at a time; a lone `&` folds to nothing there.
  const pool = [
    ..."abcXYZ019_- .:/",
    "ﬃ", // NFKC: three letters of one
    "㎒", // NFKC: "MHz"
    "Ｔ", // full width
    "о", // Cyrillic look-alike
    "𝟕", // astral mathematical digit
    "\uD800", // lone surrogate
    "é",
    "İ",
  ];
  const spellings = [
    MARKER,
    MARKER.toUpperCase(),
    `trace-canary-${RANDOM.split("").join(" ")}`,
    [...RANDOM].map((ch) =>
      /[0-9]/.test(ch)
        ? String.fromCodePoint(0x1d7ce + Number(ch))
        : ch.toUpperCase()
    ).join(""),
    `Ｔrace_canary_${RANDOM.replaceAll("o", "о")}`,
  ];
  let seed = 7;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
  let found = 0;
  for (let round = 0; round < 300; round++) {
    const noise = (n: number) =>
      Array.from({ length: n }, () => pool[next() % pool.length]).join("");
    const spelled = round % 3 === 0 ? "" : spellings[next() % spellings.length];
    const text = `${noise(next() % 40)}${spelled}${noise(next() % 40)}`;
    const match = findMarker(text, MARKER);
    assert.deepEqual(
      match,
      findMarker(`${text}&`, MARKER),
      JSON.stringify(text),
    );
    if (match?.form === "rendered") found++;
  }
  assert.ok(found > 100, `${found} rendered matches compared`);
});
