/**
 * The marker as styled renderers write it: HTML's named references, tags
 * whose quoted attributes hold `>`, comments, Unicode tag characters, small
 * capitals. Every reference a renderer decodes is decoded, a tag ends where
 * a browser ends it, and what a model or a reader still reads as the marker
 * is read as it.
 */

import assert from "node:assert/strict";
import { characterEntities } from "character-entities";
import {
  findMarker,
  foldForMatching,
  MARKER_ALPHABET,
  MARKER_PREFIX,
  newMarker,
  type RenderingTrait,
} from "../lib/runner/marker/mod.ts";

const MARKER = "trace_canary_7h3kq9x2mvb8rw4tjc0nd5pz1a";

/** Each character of the marker's alphabet, and the named references whose text folds to it. */
function namesByCharacter(): Map<string, string[]> {
  const names = new Map<string, string[]>();
  for (const [name, text] of Object.entries(characterEntities)) {
    const folded = foldForMatching(text).folded;
    if (folded.length !== 1 || !MARKER_ALPHABET.includes(folded)) continue;
    names.set(folded, [...names.get(folded) ?? [], name]);
  }
  return names;
}

Deno.test("findMarker() reads a marker whose letters and digits are named references a renderer decodes", async (t) => {
  const cases: [string, string, RenderingTrait[]][] = [
    [
      "double-struck letters (&aopf;)",
      MARKER.replace(/[a-z]/g, (ch) => `&${ch}opf;`),
      ["html_entities", "compatibility_forms"],
    ],
    [
      "Fraktur and script letters (&afr;, &ascr;)",
      MARKER.replace(/[a-z]/g, (ch, i) => `&${ch}${i % 2 ? "fr" : "scr"};`),
      ["html_entities", "compatibility_forms"],
    ],
    [
      "Greek letters (&alpha;, &kappa;, &tau;, &chi;, &nu;)",
      MARKER.replace(
        /[aktxv]/g,
        (ch) =>
          `&${{ a: "alpha", k: "kappa", t: "tau", x: "chi", v: "nu" }[ch]};`,
      ),
      ["html_entities", "homoglyphs"],
    ],
    [
      "Cyrillic letters (&acy;, &iecy;)",
      MARKER.replace(/a/g, "&acy;").replace(/e/g, "&iecy;"),
      ["html_entities", "homoglyphs"],
    ],
    [
      "superscript digits and ordinals (&sup2;, &ordf;)",
      MARKER.replace(/1/g, "&sup1;").replace(/2/g, "&sup2;").replace(
        /3/g,
        "&sup3;",
      ).replace(/a/g, "&ordf;"),
      ["html_entities", "compatibility_forms"],
    ],
    [
      "legacy names without their ; (&sup2x)",
      MARKER.replace(/2/g, "&sup2").replace(/3/g, "&sup3"),
      ["html_entities", "compatibility_forms"],
    ],
  ];
  for (const [name, rendered, traits] of cases) {
    await t.step(name, () => {
      assert.deepEqual(findMarker(`<p>Found: ${rendered}.</p>`, MARKER), {
        form: "rendered",
        rendering: traits,
      }, rendered);
    });
  }
});

Deno.test("findMarker() reads every named reference that stands for a character of the alphabet", () => {
  const names = namesByCharacter();
  // Every letter has at least one (many have dozens); digits have few: 1, 2
  // and 3 (`&sup1;`), 0 and 6 through look-alikes (`&omicron;`, `&bcy;`).
  assert.deepEqual(
    [...MARKER_ALPHABET].filter((ch) => !names.has(ch)).join(""),
    "45789",
  );
  for (let round = 0; round < 40; round++) {
    const marker = newMarker();
    const random = marker.slice(MARKER_PREFIX.length);
    const written = [...random].map((ch) => {
      const options = names.get(ch);
      if (!options) return ch;
      return `&${options[(round * 7 + ch.charCodeAt(0)) % options.length]};`;
    }).join("");
    const answer = `Retrieved: ${MARKER_PREFIX}${written}`;
    assert.notEqual(findMarker(answer, marker), null, answer);
  }
});

Deno.test("findMarker() drops names no table holds, and never reads a name off the object prototype", () => {
  const split = `${MARKER.slice(0, 20)}&nosuchname;${MARKER.slice(20)}`;
  assert.notEqual(findMarker(split, MARKER), null);
  for (
    const name of ["constructor", "toString", "hasOwnProperty"]
  ) {
    const answer = `${MARKER.slice(0, 20)}&${name};${MARKER.slice(20)}`;
    assert.notEqual(findMarker(answer, MARKER), null, name);
  }
  // A legacy name decodes only as long as a name goes: `&notin;` is `∉`, `&notit;` is `¬it;` (`1t` folded).
  assert.equal(foldForMatching("&notit;").folded, "1t");
  assert.equal(foldForMatching("&amp;lt&amp;gt").folded, "");
});

Deno.test("findMarker() ends a tag where a browser does: a quoted value may hold > and <", async (t) => {
  const wrap = (attributes: string) =>
    [...MARKER].map((ch) => `<span ${attributes}>${ch}</span>`).join("");
  const cases: [string, string][] = [
    ["> in a double-quoted value", wrap('title="a>b"')],
    ["> in a single-quoted value", wrap("title='x>y' class=hl")],
    ["a tag inside a value", wrap('data-html="<i>b</i>"')],
    ["white space around =", wrap('title = "a>b" ')],
    ["a quote inside an unquoted value", wrap('data-x=a"b')],
    [
      "self-closing with a quoted >",
      `${MARKER.slice(0, 20)}<img alt="a>b"/>${MARKER.slice(20)}`,
    ],
  ];
  for (const [name, answer] of cases) {
    await t.step(name, () => {
      assert.deepEqual(findMarker(answer, MARKER), {
        form: "rendered",
        rendering: ["markup_tags"],
      }, answer);
    });
  }
  // A value that never closes makes no tag: its letters stay text and break the marker.
  assert.equal(
    findMarker(`${MARKER.slice(0, 20)}<b title="x>${MARKER.slice(20)}`, MARKER),
    null,
  );
});

Deno.test("findMarker() reads a marker split by HTML comments, which a browser does not show", () => {
  const answer = `${MARKER.slice(0, 18)}<!-- cached -->${
    MARKER.slice(18, 30)
  }<!---->${MARKER.slice(30)}`;
  assert.deepEqual(findMarker(answer, MARKER), {
    form: "rendered",
    rendering: ["markup_tags"],
  });
  // An unclosed comment hides nothing: its letters stay text.
  assert.equal(
    findMarker(`${MARKER.slice(0, 20)}<!-- x ${MARKER.slice(20)}`, MARKER),
    null,
  );
});

Deno.test("findMarker() reads a marker written in Unicode tag characters, which render as nothing but a model reads", () => {
  const tags = [...MARKER].map((ch) =>
    String.fromCodePoint(0xe0000 + ch.charCodeAt(0))
  ).join("");
  assert.deepEqual(findMarker(`Nothing to see here.${tags}`, MARKER), {
    form: "rendered",
    rendering: ["tag_characters"],
  });
  // Tag characters outside the printable ASCII range stand for nothing.
  assert.equal(foldForMatching("\u{E0001}\u{E007F}").folded, "");
});

Deno.test("findMarker() reads base64 whose bytes are not all text: a byte that starts no UTF-8 sequence is a break", () => {
  const bytes = new Uint8Array([
    0xff,
    0xfe,
    ...new TextEncoder().encode(`Relevant: ${MARKER}`),
    0xc3,
  ]);
  const base64 = btoa(String.fromCharCode(...bytes));
  assert.deepEqual(findMarker(`attachment: ${base64}`, MARKER), {
    form: "rendered",
    rendering: ["base64"],
  });
});

Deno.test("findMarker() reads a marker in Latin small capitals, as fancy-text generators write them", () => {
  const smallCaps: Record<string, string> = {
    a: "\u1d00",
    b: "\u0299",
    c: "\u1d04",
    d: "\u1d05",
    e: "\u1d07",
    h: "\u029c",
    k: "\u1d0b",
    m: "\u1d0d",
    n: "\u0274",
    p: "\u1d18",
    q: "\u01eb",
    r: "\u0280",
    t: "\u1d1b",
    v: "\u1d20",
    w: "\u1d21",
    z: "\u1d22",
  };
  const styled = [...MARKER].map((ch) => smallCaps[ch] ?? ch).join("");
  assert.deepEqual(findMarker(`ꜰᴀɴᴄʏ: ${styled}`, MARKER), {
    form: "rendered",
    rendering: ["homoglyphs"],
  });
});

Deno.test("findMarker() ends tags and comments where a browser ends them, whatever the quotes around", async (t) => {
  const [a, b] = [MARKER.slice(0, 20), MARKER.slice(20)];
  const cases: [string, string][] = [
    ["an empty comment <!-->", `<!-->${a}<wbr>${b}<!-- -->`],
    ["an empty comment <!--->", `<!--->${a}<wbr>${b}`],
    ["a comment closed by --!>", `${a}<!-- x --!>${b}`],
    ["= where a name starts quotes nothing", `<b ="x>${a}<wbr>${b}">`],
    ["a quote inside an unquoted value", `<b c=d="x>${a}<wbr>${b}">`],
    ["a quote after a name without =", `<b c "x>${a}<wbr>${b}">`],
  ];
  for (const [name, answer] of cases) {
    await t.step(name, () => {
      const found = findMarker(answer, MARKER);
      assert.equal(found?.form, "rendered", answer);
      assert.ok(found?.rendering.includes("markup_tags"), answer);
    });
  }
});

Deno.test("findMarker() reads numeric references padded with any number of zeros, as a browser does", () => {
  const padded = MARKER.replace(
    /[a-z]/g,
    (ch, i) =>
      i % 2
        ? `&#x${"0".repeat(40)}${ch.charCodeAt(0).toString(16)};`
        : `&#${"0".repeat(9)}${ch.charCodeAt(0)};`,
  );
  assert.deepEqual(findMarker(padded, MARKER), {
    form: "rendered",
    rendering: ["html_entities"],
  });
  // Past the largest code point, a reference stands for nothing, however long.
  assert.equal(foldForMatching(`&#${"9".repeat(50)};x`).folded, "x");
  assert.equal(foldForMatching("&#x110000;&#xD800;&#0;y").folded, "y");
});
