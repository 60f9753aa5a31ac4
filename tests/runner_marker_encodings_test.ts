/** A marker in text an answer ships encoded: base64 inside a string, hex, percent-encoding, string escapes. */

import assert from "node:assert/strict";
import {
  decodedTexts,
  type Encoding,
} from "../lib/runner/marker/_encodings.ts";
import {
  hexDumpDigits,
  wordsReversed,
} from "../lib/runner/marker/_hex_dumps.ts";
import {
  describeRendering,
  findMarker,
  findMarkerInAnswer,
  MARKER_ALPHABET,
  MARKER_RANDOM_LENGTH,
  newMarker,
  type RenderingTrait,
} from "../lib/runner/marker/mod.ts";
import { canaryText } from "../lib/runner/ids.ts";

const MARKER = "trace_canary_7h3kq9x2mvb8rw4tjc0nd5pz1a";

const utf8Bytes = (text: string) => new TextEncoder().encode(text);
const base64 = (text: string) => btoa(String.fromCharCode(...utf8Bytes(text)));
const hex = (text: string) =>
  Array.from(utf8Bytes(text), (b) => b.toString(16).padStart(2, "0")).join("");
const percent = (text: string) =>
  Array.from(utf8Bytes(text), (b) => `%${b.toString(16).padStart(2, "0")}`)
    .join("").toUpperCase();
const unicodeEscapes = (text: string) =>
  Array.from(
    text,
    (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`,
  ).join("");

function assertFound(
  answer: string,
  rendering: RenderingTrait[],
): void {
  assert.deepEqual(
    findMarker(answer, MARKER),
    { form: "rendered", rendering },
    answer,
  );
  assert.equal(findMarker(answer, newMarker()), null, answer);
}

Deno.test("findMarker() recognises a marker in base64 inside a longer string", async (t) => {
  const cases: [string, string][] = [
    ["a data URI", `data:text/plain;base64,${base64(`probe ${MARKER}`)}`],
    [
      "a data URI with a charset, in markup",
      `<a href="data:text/plain;charset=utf-8;base64,${
        base64(`Synthetic record — ${MARKER}`)
      }">file</a>`,
    ],
    ["after base64, in prose", `the blob base64,${base64(MARKER)} follows`],
    [
      "a run after a name and =",
      `id=42 payload=${base64(`deletion probe ${MARKER}`)} size=3`,
    ],
    [
      "a standard run glued to a name by _",
      `payload_${base64(`probe ${MARKER}?>?>`)}`,
    ],
    [
      "a URL-safe run",
      `token ${
        base64(`probe ${MARKER}?>?>`).replace(/\+/g, "-").replace(/\//g, "_")
          .replace(/=+$/, "")
      } end`,
    ],
    [
      "on the line after a word that ends no group of four",
      `Payload\r\n${base64(`probe ${MARKER}`)}`,
    ],
    [
      "wrapped every 76 characters inside a message",
      `Content-Transfer-Encoding: base64\r\n\r\n${
        base64(`probe ${MARKER} `.repeat(4)).replace(/(.{76})/g, "$1\r\n")
      }\r\n--boundary--`,
    ],
  ];
  for (const [name, answer] of cases) {
    await t.step(name, () => assertFound(answer, ["base64"]));
  }
  assertFound(`payload=${base64(`x ${MARKER.toUpperCase()}`)}`, [
    "case",
    "base64",
  ]);
});

Deno.test("findMarker() reads \\/ as / in base64 inside JSON serialised twice", async (t) => {
  // Full-width text after 8 ASCII bytes: its base64 has a `/` in the middle
  // of a group, so a run split at each `\/` never realigns on the marker.
  const text = `Stored: ${
    Array.from(MARKER, (ch) => String.fromCharCode(ch.charCodeAt(0) + 0xfee0))
      .join("")
  }`;
  const escaped = base64(text).replaceAll("/", "\\/");
  assert.match(escaped, /\\\//);
  const cases: [string, string][] = [
    [
      "a data URI in a JSON string",
      `{"doc":"{\\"uri\\":\\"data:text\\/plain;base64,${escaped}\\"}"}`,
    ],
    ["a whole string", escaped],
    [
      "wrapped every 76 characters",
      `blob:\n${
        base64(`${text} `.repeat(4)).replace(/(.{76})/g, "$1\n")
          .replaceAll("/", "\\/")
      }`,
    ],
  ];
  for (const [name, answer] of cases) {
    await t.step(name, () => assertFound(answer, ["full_width", "base64"]));
  }
  // Only `\/` is read so: another escape inside the run still ends it.
  assert.equal(
    findMarker(base64(text).replaceAll("/", "\\u002f"), MARKER),
    null,
  );
});

Deno.test("findMarker() decodes a base64 run only from its first character, and never twice", () => {
  const encoded = base64(`probe ${MARKER}`);
  for (
    const answer of [
      // A letter glued to the run shifts every group of four after it.
      `payload=x${encoded}`,
      // Double-encoded: the decoding is searched, not decoded again.
      `blob: ${btoa(encoded)}`,
      // Shorter than the base64 of a random part: nothing to decode.
      `key=${base64(MARKER.slice(-20))}`,
    ]
  ) {
    assert.equal(findMarker(answer, MARKER), null, answer);
  }
});

Deno.test("findMarker() recognises a marker in hex, a whole string or a run, either case", async (t) => {
  const cases: [string, string][] = [
    ["a whole string", hex(`probe ${MARKER}`)],
    ["upper case inside text", `dump: ${hex(MARKER).toUpperCase()} (end)`],
    ["after 0x", `bytes 0x${hex(`probe ${MARKER}`)}`],
    ["glued to a byte that is not text", `id=ff${hex(`probe ${MARKER}`)}`],
    ["glued to a cut sequence", `${hex(`probe ${MARKER}`)}e282`],
    [
      "wrapped every 60 digits",
      `${hex(`Synthetic record: probe ${MARKER}`).replace(/(.{60})/g, "$1\n")}`,
    ],
  ];
  for (const [name, answer] of cases) {
    await t.step(name, () => assertFound(answer, ["hex"]));
  }
  assert.equal(findMarker(hex(base64(MARKER)), MARKER), null);
});

Deno.test("findMarker() reads a run of hex digits from its first digit and from its second", async (t) => {
  const encoded = hex(`Synthetic record: probe ${MARKER} done`);
  const sha256 =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
  const cases: [string, string][] = [
    // The run starts at the `a` of `data`: `a7472…`.
    ["glued after a word ending in a hex letter", `data${encoded}`],
    ["glued after a hex letter, upper case", `id=A${encoded.toUpperCase()}`],
    ["cut at its start", `payload=${encoded.slice(1)}`],
    ["cut at its end", `payload=${encoded.slice(0, -1)}…`],
    [
      "glued after a hex letter and wrapped every 60 digits",
      `payload: data${encoded.replace(/(.{60})/g, "$1\n")}`,
    ],
    [
      "cut at its end and wrapped every 60 digits",
      `${encoded.replace(/(.{60})/g, "$1\n").slice(0, -1)}`,
    ],
    // Glued on both sides: an even run, every byte one digit off.
    ["glued after and before a hex letter", `data${encoded}end`],
    [
      "glued after a hex letter and cut at its end",
      `data${encoded.slice(0, -1)}`,
    ],
    // The line before holds whole bytes, so the run goes on over the break.
    [
      "glued after a hex letter on a line after a SHA-256",
      `${sha256}\nbad${encoded}`,
    ],
    [
      "glued after a hex letter on a line after a SHA-256, wrapped every 60 digits",
      `${sha256}\nbad${encoded.replace(/(.{60})/g, "$1\n")}`,
    ],
    ["on a line after a line of odd length", `abc\nbad${encoded}`],
    // The random part starts at digit 26 and crosses the first line break.
    [
      "glued after a hex letter and wrapped every 60 digits from the marker",
      `data${hex(MARKER).replace(/(.{60})/g, "$1\n")}`,
    ],
  ];
  for (const [name, answer] of cases) {
    await t.step(name, () => assertFound(answer, ["hex"]));
  }
});

Deno.test("findMarker() recognises a marker in hex bytes with one separator between them", async (t) => {
  const bytes = (text: string, separator: string) =>
    hex(text).replace(/(..)(?!$)/g, `$1${separator}`);
  const cases: [string, string][] = [
    ["spaces", `dump: ${bytes(`probe ${MARKER}`, " ")} (end)`],
    ["colons, upper case", bytes(MARKER, ":").toUpperCase()],
    ["dashes, after other text", `key-id: ${bytes(`probe ${MARKER}`, "-")}`],
    [
      "beside a run of digits alone",
      `${hex("lead")}\n${bytes(`probe ${MARKER}`, " ")}\n${hex("tail")}`,
    ],
  ];
  for (const [name, answer] of cases) {
    await t.step(name, () => assertFound(answer, ["hex"]));
  }
  for (
    const answer of [
      // The separator changes halfway: two runs, each too short.
      `${bytes(MARKER.slice(0, 20), " ")} ${bytes(MARKER.slice(20), ":")}`,
      // A byte of three digits inside the random part breaks the run.
      `${bytes(MARKER, " ").slice(0, 80)}0${bytes(MARKER, " ").slice(80)}`,
      // Two separators between bytes.
      bytes(`probe ${MARKER}`, "  "),
      // Shorter than the hex of a random part.
      bytes(MARKER.slice(-25), " "),
    ]
  ) {
    assert.equal(findMarker(answer, MARKER), null, answer);
  }
});

Deno.test("findMarker() reads separated hex beside a word written with hex letters", async (t) => {
  const bytes = (text: string) => hex(text).replace(/(..)(?!$)/g, "$1 ");
  // ξ is `ce be`: a genuine first and last byte of letters alone.
  const greek = `\u03be ${MARKER} \u03be`;
  const cases: [string, string][] = [
    ["after a word ending in hex letters", `Unicode ${bytes(MARKER)}`],
    [
      "after prose",
      `Here is the code ${bytes(`Relevant: ${MARKER}`)}`,
    ],
    ["after a word of two hex letters", `It will be ${bytes(MARKER)}`],
    ["before a word of two hex letters", `${bytes(MARKER)} be`],
    ["between two such words", `de ${bytes(MARKER)} ad`],
    ["a word before bytes of letters alone", `be ${bytes(greek)}`],
    ["a word after bytes of letters alone", `${bytes(greek)} ad`],
  ];
  for (const [name, answer] of cases) {
    await t.step(name, () => assertFound(answer, ["hex"]));
  }
});

Deno.test("findMarker() reads separated hex beside a number or any byte that is not text", async (t) => {
  const bytes = (text: string) => hex(text).replace(/(..)(?!$)/g, "$1 ");
  const cases: [string, string][] = [
    ["after a number", `Score 95 ${bytes(MARKER)}`],
    ["after a word ending in a byte", `Seat A1 ${bytes(MARKER)}`],
    ["after two words of hex letters", `be de ${bytes(MARKER)}`],
    ["before a number", `${bytes(MARKER)} 99 bottles`],
    ["between cut sequences", `e2 82 ${bytes(MARKER)} f0 9f 98`],
    ["beside a run of invalid bytes", `ff fe c0 ${bytes(MARKER)} 80 80`],
  ];
  for (const [name, answer] of cases) {
    await t.step(name, () => assertFound(answer, ["hex"]));
  }
});

Deno.test("findMarker() keeps the last byte of separated hex that a letter follows", async (t) => {
  const bytes = (text: string) => hex(text).replace(/(..)(?!$)/g, "$1 ");
  for (const letter of ["x", "h", "g", "Z"]) {
    await t.step(
      letter,
      () => assertFound(`${bytes(MARKER)}${letter}`, ["hex"]),
    );
  }
});

Deno.test("findMarker() reads a separated hex dump wrapped over lines", async (t) => {
  const dump = (text: string, perLine: number, lineStart: string) =>
    hex(text).match(new RegExp(`.{1,${2 * perLine}}`, "g"))!
      .map((line) => lineStart + line.replace(/(..)(?!$)/g, "$1 "))
      .join("\n");
  const text = `Synthetic record: probe ${MARKER}`;
  const cases: [string, string][] = [
    ["16 bytes a line", dump(text, 16, "")],
    ["as od -An -tx1 writes it", dump(text, 16, " ")],
    ["a space before each break", dump(text, 16, "").replace(/\n/g, " \n")],
    ["CRLF, 8 bytes a line", dump(text, 8, "").replace(/\n/g, "\r\n")],
    ["colons", dump(text, 16, "").replace(/ /g, ":")],
    ["after a label line", `bytes:\n${dump(text, 16, " ")}\n`],
  ];
  for (const [name, answer] of cases) {
    await t.step(name, () => assertFound(answer, ["hex"]));
  }
  for (
    const answer of [
      // Fewer than five bytes a line: most bytes sit beside a break.
      dump(text, 4, ""),
      // A blank line ends a run.
      dump(text, 16, "").replace(/\n/g, "\n\n"),
    ]
  ) {
    assert.equal(findMarker(answer, MARKER), null, answer);
  }
});

/** How a tool dumps bytes: offsets, their base and width, byte groups, a text column. */
interface DumpShape {
  offsetDigits: number;
  base?: 16 | 10 | 8;
  /** After the offset, before the first group: `": "` for xxd. */
  afterOffset: string;
  /** Bytes in one group: 2 for xxd's default. */
  groupBytes?: number;
  /**
   * 2-byte words in little-endian byte order, as `od -x` and `hexdump` write
   * them: `7274` for the bytes `74 72`, an odd last byte padded with `00`.
   */
  littleEndianWords?: boolean;
  /** A second space after this many bytes, as `hexdump -C` writes its halves. */
  half?: number;
  /** The text column: none, bare after two spaces, between bars or angle brackets. */
  textColumn: "" | "bare" | "|" | ">";
  /** A last line holding only the offset after the last byte. */
  endOffset: boolean;
  width?: number;
  start?: number;
  /** Hex digits in capitals, as Python's `hexdump` writes them. */
  upperCase?: boolean;
  /** A short last line padded with spaces so its text column lines up, as `hexdump -C` pads it. */
  padded?: boolean;
}

/** `text`'s UTF-8 bytes dumped as `shape` says. */
function dump(text: string, shape: DumpShape): string {
  const bytes = utf8Bytes(text);
  const width = shape.width ?? 16;
  const start = shape.start ?? 0;
  const offset = (at: number) =>
    (start + at).toString(shape.base ?? 16).padStart(shape.offsetDigits, "0");
  const lines: string[] = [];
  for (let at = 0; at < bytes.length; at += width) {
    const digits = (b: number) => {
      const pair = b.toString(16).padStart(2, "0");
      return shape.upperCase ? pair.toUpperCase() : pair;
    };
    const row = Array.from(bytes.subarray(at, at + width), digits);
    const columns = shape.littleEndianWords
      ? wordColumns(row)
      : byteColumns(row, shape);
    const padding = shape.padded
      ? " ".repeat(
        byteColumns(Array(width).fill("00"), shape).length - columns.length,
      )
      : "";
    const printable = Array.from(
      bytes.subarray(at, at + width),
      (b) => b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : ".",
    ).join("");
    const text = {
      "": "",
      bare: `  ${printable}`,
      "|": `  |${printable}|`,
      ">": `  >${printable}<`,
    }[shape.textColumn];
    lines.push(
      `${offset(at)}${shape.afterOffset}${columns}${padding}${text}`,
    );
  }
  if (shape.endOffset) lines.push(offset(bytes.length));
  return lines.join("\n");
}

/** A dump line's byte digits in `shape`'s groups, a second space before its `half`. */
function byteColumns(row: readonly string[], shape: DumpShape): string {
  const groups: string[] = [];
  for (let i = 0; i < row.length; i += shape.groupBytes ?? 1) {
    const gap = i > 0 && i === shape.half ? "  " : i > 0 ? " " : "";
    groups.push(gap + row.slice(i, i + (shape.groupBytes ?? 1)).join(""));
  }
  return groups.join("");
}

/** A dump line's byte digits as little-endian 2-byte words, an odd last byte padded with `00`. */
function wordColumns(row: readonly string[]): string {
  const words: string[] = [];
  for (let i = 0; i < row.length; i += 2) {
    words.push((row[i + 1] ?? "00") + row[i]);
  }
  return words.join(" ");
}

const XXD: DumpShape = {
  offsetDigits: 8,
  afterOffset: ": ",
  groupBytes: 2,
  textColumn: "bare",
  endOffset: false,
};
const HEXDUMP_C: DumpShape = {
  offsetDigits: 8,
  afterOffset: "  ",
  half: 8,
  textColumn: "|",
  endOffset: true,
};
const OD_HEX: DumpShape = {
  offsetDigits: 6,
  afterOffset: " ",
  textColumn: "",
  endOffset: true,
};
/** `od -x`: octal offsets of 7 digits, little-endian 2-byte words. */
const OD_WORDS: DumpShape = {
  offsetDigits: 7,
  base: 8,
  afterOffset: " ",
  littleEndianWords: true,
  textColumn: "",
  endOffset: true,
};
/** `hexdump` without `-C`: hex offsets of 7 digits, little-endian 2-byte words. */
const HEXDUMP_WORDS: DumpShape = { ...OD_WORDS, base: 16 };

Deno.test("dump() writes the shapes xxd, hexdump -C and od print", () => {
  const text =
    "Relevant: trace_canary_7h3kq9x2mvb8rw4tjc0nd5pz1a \u00e9 done\n";
  assert.equal(
    dump(text, XXD).split("\n").at(-1),
    "00000030: 6120 c3a9 2064 6f6e 650a  a .. done.",
  );
  assert.equal(
    dump(text, HEXDUMP_C).split("\n").slice(0, 2).join("\n"),
    "00000000  52 65 6c 65 76 61 6e 74  3a 20 74 72 61 63 65 5f  |Relevant: trace_|\n" +
      "00000010  63 61 6e 61 72 79 5f 37  68 33 6b 71 39 78 32 6d  |canary_7h3kq9x2m|",
  );
  assert.equal(
    dump(text, OD_HEX).split("\n").slice(-2).join("\n"),
    "000030 61 20 c3 a9 20 64 6f 6e 65 0a\n00003a",
  );
  assert.equal(
    dump(text, { ...OD_HEX, offsetDigits: 7, base: 10 })
      .split("\n").slice(-2).join("\n"),
    "0000048 61 20 c3 a9 20 64 6f 6e 65 0a\n0000058",
  );
  assert.equal(
    dump(text, OD_WORDS).split("\n").slice(-3).join("\n"),
    "0000040 6276 7238 3477 6a74 3063 646e 7035 317a\n" +
      "0000060 2061 a9c3 6420 6e6f 0a65\n0000072",
  );
  assert.equal(
    dump(text, HEXDUMP_WORDS).split("\n")[1],
    "0000010 6163 616e 7972 375f 3368 716b 7839 6d32",
  );
  assert.equal(
    dump(`${text}!`, OD_WORDS).split("\n").slice(-2).join("\n"),
    "0000060 2061 a9c3 6420 6e6f 0a65 0021\n0000073",
  );
});

Deno.test("findMarker() reads hex dumps with an offset column, byte groups and a text column", async (t) => {
  const text = `Synthetic record: probe ${MARKER} \u00e9 done.\n`;
  const cases: [string, string][] = [
    ["xxd", dump(text, XXD)],
    ["xxd -g1", dump(text, { ...XXD, groupBytes: 1 })],
    ["xxd -g4 -c 12", dump(text, { ...XXD, groupBytes: 4, width: 12 })],
    ["xxd -s 4096", dump(text, { ...XXD, start: 4096 })],
    ["hexdump -C", dump(text, HEXDUMP_C)],
    [
      "hexdump -C without its end offset",
      dump(text, {
        ...HEXDUMP_C,
        endOffset: false,
      }),
    ],
    ["od -A x -t x1", dump(text, OD_HEX)],
    ["od -A x -t x1z", dump(text, { ...OD_HEX, textColumn: ">" })],
    [
      "od -t x1, octal offsets",
      dump(text, {
        ...OD_HEX,
        offsetDigits: 7,
        base: 8,
      }),
    ],
    ["CRLF", dump(text, HEXDUMP_C).replace(/\n/g, "\r\n")],
    [
      "indented after a label",
      `bytes:\n${dump(text, XXD).replace(/^/gm, "    ")}\n(end)`,
    ],
  ];
  for (const [name, answer] of cases) {
    await t.step(name, () => assertFound(answer, ["hex"]));
  }
});

Deno.test("findMarker() reads od dumps with decimal offsets", async (t) => {
  const text = `Synthetic record: probe ${MARKER} \u00e9 done.\n`;
  const decimal: DumpShape = { ...OD_HEX, offsetDigits: 7, base: 10 };
  const cases: [string, string][] = [
    ["od -A d -t x1", dump(text, decimal)],
    ["od -A d -t x1z", dump(text, { ...decimal, textColumn: ">" })],
    // 0000008 reads as 8 in hex too; 0000016 after it does not.
    ["od -A d -w8 -t x1", dump(text, { ...decimal, width: 8 })],
    ["od -A d -w12 -t x1", dump(text, { ...decimal, width: 12 })],
    [
      "od -A d -j 1000 -t x1, without its end offset",
      dump(text, { ...decimal, start: 1000, endOffset: false }),
    ],
  ];
  for (const [name, answer] of cases) {
    await t.step(name, () => assertFound(answer, ["hex"]));
  }
});

Deno.test("findMarker() reads dumps of 2-byte words in little-endian byte order", async (t) => {
  const even = `Synthetic record: probe ${MARKER} done.\n`;
  const odd = `Synthetic record: probe ${MARKER} done!\n!`;
  assert.equal(utf8Bytes(even).length % 2, 0);
  assert.equal(utf8Bytes(odd).length % 2, 1);
  const cases: [string, string][] = [
    ["od -x", dump(even, OD_WORDS)],
    ["od -x, an odd length padded", dump(odd, OD_WORDS)],
    ["od -A x -t x2", dump(even, { ...OD_WORDS, base: 16, offsetDigits: 6 })],
    ["od -A d -x", dump(odd, { ...OD_WORDS, base: 10 })],
    ["hexdump", dump(even, HEXDUMP_WORDS)],
    ["hexdump, an odd length padded", dump(odd, HEXDUMP_WORDS)],
    [
      "hexdump without its end offset, upper case",
      dump(odd, { ...HEXDUMP_WORDS, endOffset: false, upperCase: true }),
    ],
    // xxd writes 2-byte words too, in file order: still read as written.
    ["xxd -c 16 -g 2", dump(even, { ...XXD, textColumn: "" })],
  ];
  for (const [name, answer] of cases) {
    await t.step(name, () => assertFound(answer, ["hex"]));
  }
});

/**
 * Output of `od`, `hexdump` and `xxd` (coreutils 9.1, util-linux 2.38, xxd 2022)
 * for `Synthetic record: probe ${MARKER} done.\n`, and for
 * `Synthetic record: probe ${MARKER}` (63 bytes: `xxd -e` writes the last 3
 * as a cut word, right-aligned), as the tools printed them.
 */
const TOOL_DUMPS: readonly [string, string][] = [
  [
    "od -t x4",
    `0000000 746e7953 69746568 65722063 64726f63
0000020 7270203a 2065626f 63617274 61635f65
0000040 7972616e 3368375f 7839716b 62766d32
0000060 34777238 30636a74 7035646e 2061317a
0000100 656e6f64 00000a2e
0000106
`,
  ],
  [
    "od -A d -t x8",
    `0000000 69746568746e7953 64726f6365722063
0000016 2065626f7270203a 61635f6563617274
0000032 3368375f7972616e 62766d327839716b
0000048 30636a7434777238 2061317a7035646e
0000064 00000a2e656e6f64
0000070
`,
  ],
  [
    "xxd -e",
    `00000000: 746e7953 69746568 65722063 64726f63  Synthetic record
00000010: 7270203a 2065626f 63617274 61635f65  : probe trace_ca
00000020: 7972616e 3368375f 7839716b 62766d32  nary_7h3kq9x2mvb
00000030: 34777238 30636a74 7035646e 2061317a  8rw4tjc0nd5pz1a 
00000040: 656e6f64     0a2e                    done..
`,
  ],
  [
    "hexdump -x",
    `0000000    7953    746e    6568    6974    2063    6572    6f63    6472
0000010    203a    7270    626f    2065    7274    6361    5f65    6163
0000020    616e    7972    375f    3368    716b    7839    6d32    6276
0000030    7238    3477    6a74    3063    646e    7035    317a    2061
0000040    6f64    656e    0a2e                                        
0000046
`,
  ],
  [
    "od -An -x",
    ` 7953 746e 6568 6974 2063 6572 6f63 6472
 203a 7270 626f 2065 7274 6361 5f65 6163
 616e 7972 375f 3368 716b 7839 6d32 6276
 7238 3477 6a74 3063 646e 7035 317a 2061
 6f64 656e 0a2e
`,
  ],
  [
    "od -An -t x4",
    ` 746e7953 69746568 65722063 64726f63
 7270203a 2065626f 63617274 61635f65
 7972616e 3368375f 7839716b 62766d32
 34777238 30636a74 7035646e 2061317a
 656e6f64 00000a2e
`,
  ],
  [
    "od -An -t x8",
    ` 69746568746e7953 64726f6365722063
 2065626f7270203a 61635f6563617274
 3368375f7972616e 62766d327839716b
 30636a7434777238 2061317a7035646e
 00000a2e656e6f64
`,
  ],
  [
    "xxd -e (cut)",
    `00000000: 746e7953 69746568 65722063 64726f63  Synthetic record
00000010: 7270203a 2065626f 63617274 61635f65  : probe trace_ca
00000020: 7972616e 3368375f 7839716b 62766d32  nary_7h3kq9x2mvb
00000030: 34777238 30636a74 7035646e   61317a  8rw4tjc0nd5pz1a
`,
  ],
  [
    "xxd -e -g 8 (cut)",
    `00000000: 69746568746e7953 64726f6365722063  Synthetic record
00000010: 2065626f7270203a 61635f6563617274  : probe trace_ca
00000020: 3368375f7972616e 62766d327839716b  nary_7h3kq9x2mvb
00000030: 30636a7434777238   61317a7035646e  8rw4tjc0nd5pz1a
`,
  ],
];

Deno.test("findMarker() reads od, hexdump -x and xxd -e output of 2-, 4- and 8-byte little-endian words, with offsets or without", async (t) => {
  for (const [name, answer] of TOOL_DUMPS) {
    await t.step(name, () => assertFound(answer, ["hex"]));
  }
});

Deno.test("findMarker() reads a run of separated words however few a line holds (od -An -x -w4, -w2)", () => {
  const words = TOOL_DUMPS.find(([name]) => name === "od -An -x")![1];
  for (const perLine of [2, 1]) {
    const narrow = words.trim().split(/\s+/).reduce(
      (out, word, i) => out + (i % perLine === 0 ? "\n " : " ") + word,
      "",
    );
    assertFound(narrow, ["hex"]);
  }
});

/** The hex readings of `answer`: every decoding of its hex, dumps among them. */
function hexReadings(answer: string): number {
  return [...decodedTexts(answer, MARKER_RANDOM_LENGTH)]
    .filter((decoded) => decoded.encoding === "hex").length;
}

Deno.test("hex readers read no dump or run in decimal log columns or a ledger, and read tables whose first column steps as offsets do as dumps of words", () => {
  const years = Array.from(
    { length: 30 },
    (_, row) => Array.from({ length: 4 }, (_, i) => 1960 + 4 * row + i),
  );
  const yearsTable = years.map((row) => row.join(" ")).join("\n");
  const log = Array.from(
    { length: 40 },
    (_, i) =>
      `${String(1000 + 16 * i).padStart(7, "0")} 200 ${
        String(512 + 37 * i).padStart(5, " ")
      } 12 34 56 78 ${i % 10}${i % 7}`,
  ).join("\n");
  const ledger = Array.from(
    { length: 40 },
    (_, i) => `${2000 + i}  ${1000 + 7 * i}  ${3141 + 11 * i}  ${2718 - 5 * i}`,
  ).join("\n");
  // A first column that steps by 8 as `od -A d` offsets do, four 2-byte "words" a line.
  const stepping = Array.from(
    { length: 20 },
    (_, i) =>
      `${String(8 * i).padStart(7, "0")} ${1000 + i} ${2000 + i} ${3000 + i} ${
        4000 + i
      }`,
  ).join("\n");
  for (const answer of [log, ledger]) {
    assert.deepEqual([...hexDumpDigits(answer, MARKER_RANDOM_LENGTH)], []);
    assert.equal(hexReadings(answer), 0, answer);
  }
  // Each year steps by 4 from the one before it, as offsets of lines of 4
  // bytes would, so the table is one dump of 2-byte words whose bytes are each
  // line's second and third year (its last line's as wide as the others), read
  // as written and swapped; it is also one run of space-separated words, 8
  // bytes a line, read the same two ways.
  const yearBytes = years.map((row) => `${row[1]}${row[2]}`).join("");
  assert.deepEqual([...hexDumpDigits(yearsTable, MARKER_RANDOM_LENGTH)], [
    yearBytes,
    wordsReversed(yearBytes, 4),
  ]);
  assert.equal(hexReadings(yearsTable), 4);
  // Each line's four numbers are its 8 bytes; no line holds a run of words of 26 bytes.
  const steppingBytes = stepping.split("\n")
    .map((line) => line.split(" ").slice(1).join("")).join("");
  assert.deepEqual([...hexDumpDigits(stepping, MARKER_RANDOM_LENGTH)], [
    steppingBytes,
    wordsReversed(steppingBytes, 4),
  ]);
  assert.equal(hexReadings(stepping), 2);
});

Deno.test("findMarker() reads a marker at the end of a dump's last line past the gap in the middle of each line", async (t) => {
  const marker = newMarker();
  // 93 bytes: the last line holds 13, the marker's last 4 and its period after the gap.
  const text = canaryText(marker, 0, 3);
  assert.ok(text.endsWith(`${marker}.`));
  assert.equal(utf8Bytes(text).length % 16, 13);
  const pythonHexdump: DumpShape = {
    ...XXD,
    groupBytes: 1,
    half: 8,
    upperCase: true,
    padded: true,
  };
  // Bytes in capitals, a second space after byte 8, the short last line padded.
  assert.match(
    dump(text, pythonHexdump).split("\n").at(-1)!,
    /^00000050: (?:[0-9A-F]{2} ){7}[0-9A-F]{2} {2}(?:[0-9A-F]{2} ){4}2E {11}\S{12}\.$/,
  );
  const cases: [string, string][] = [
    [
      "hexdump -C without its end offset",
      dump(text, { ...HEXDUMP_C, endOffset: false }),
    ],
    [
      "hexdump -C without its end offset, its last line padded",
      dump(text, { ...HEXDUMP_C, endOffset: false, padded: true }),
    ],
    ["Python's hexdump", dump(text, pythonHexdump)],
    [
      "Python's hexdump, unpadded",
      dump(text, { ...pythonHexdump, padded: false }),
    ],
    ["xxd", dump(text, XXD)],
  ];
  for (const [name, answer] of cases) {
    await t.step(name, () => {
      assert.deepEqual(
        findMarker(answer, marker),
        { form: "rendered", rendering: ["hex"] },
        answer,
      );
    });
  }
});

Deno.test("findMarker() tells a dump's bytes from a text column that looks like hex by the next line's offset", () => {
  // Each text column reads as hex groups too (`cafe`, `bead`, `face`).
  const text = `cafe bead face ${MARKER} cafe bead face`;
  assertFound(dump(text, XXD), ["hex"]);
  assertFound(dump(text, { ...XXD, groupBytes: 1 }), ["hex"]);
});

Deno.test("findMarker() reads a dump only where its offsets step by each line's bytes", () => {
  const text = `Synthetic record: probe ${MARKER}`;
  const lines = dump(text, HEXDUMP_C).split("\n");
  const answers = [
    // Every line at the same offset.
    lines.map((line) => line.replace(/^[0-9a-f]{8}/, "00000000")).join("\n"),
    // Lines out of order: no two neighbours step.
    [lines[2], lines[0], lines[3], lines[1], lines[4]].join("\n"),
    // Offsets that step by 48 with 16 bytes a line (by 32 they would read
    // as octal ones, 20, 40, 60, that step by 16).
    lines.map((line, i) =>
      line.replace(/^[0-9a-f]{8}/, (48 * i).toString(16).padStart(8, "0"))
    ).join("\n"),
    // One line is no dump, however long.
    dump(text, { ...XXD, width: 64, textColumn: "" }),
  ];
  for (const answer of answers) {
    assert.equal(findMarker(answer, MARKER), null, answer);
  }
});

Deno.test("findMarker() matches no marker in UUIDs, MAC addresses or random separated hex", () => {
  const randomBytes = (count: number, separator: string) =>
    Array.from(
      crypto.getRandomValues(new Uint8Array(count)),
      (b) => b.toString(16).padStart(2, "0"),
    ).join(separator);
  for (let round = 0; round < 5; round++) {
    const marker = newMarker();
    const answers = [
      Array.from({ length: 40 }, () => crypto.randomUUID()).join(" "),
      Array.from({ length: 40 }, () => crypto.randomUUID()).join("-"),
      Array.from({ length: 40 }, () => randomBytes(6, ":")).join(" "),
      Array.from({ length: 40 }, () => randomBytes(6, "-")).join(":"),
      // One MAC address a line: one run of 6 bytes a line.
      Array.from({ length: 40 }, () => randomBytes(6, ":")).join("\n"),
      `Score 95 ${randomBytes(200, " ")} 99 bottles`,
      randomBytes(200, ":"),
      randomBytes(200, " "),
      hex(randomText(100, TEXT_ALPHABET)).replace(/(..)(?!$)/g, "$1-"),
      dump(randomText(400, TEXT_ALPHABET), XXD),
      dump(randomText(400, TEXT_ALPHABET), HEXDUMP_C),
      dump(randomText(400, "\x00\x7f\x80\xff0123456789"), OD_HEX),
      dump(randomText(400, TEXT_ALPHABET), { ...OD_WORDS, base: 10 }),
    ];
    for (const answer of answers) {
      assert.equal(findMarker(answer, marker), null, answer);
    }
  }
});

Deno.test("findMarker() recognises a percent-encoded marker, tolerating escapes that are not UTF-8", async (t) => {
  const cases: [string, string, RenderingTrait[]][] = [
    [
      "every character escaped",
      `https://app.example/doc?q=${percent(MARKER)}`,
      [
        "percent_encoding",
      ],
    ],
    [
      "a query string with + for spaces",
      `q=deletion+probe+${percent(MARKER)}&page=2`,
      ["percent_encoding"],
    ],
    [
      "invalid escapes left as they are",
      `%FF%E2%82 ${percent(MARKER)} %C0%AF 100%`,
      ["percent_encoding"],
    ],
    [
      "full-width forms escaped as UTF-8",
      percent(
        Array.from(
          MARKER,
          (ch) => String.fromCharCode(ch.charCodeAt(0) + 0xfee0),
        )
          .join(""),
      ),
      ["full_width", "percent_encoding"],
    ],
  ];
  for (const [name, answer, traits] of cases) {
    await t.step(name, () => assertFound(answer, traits));
  }
  assert.equal(findMarker(percent(percent(MARKER)), MARKER), null);
});

Deno.test("findMarker() recognises a marker in JSON or JavaScript string escapes", async (t) => {
  const fullWidth = Array.from(
    MARKER,
    (ch) => String.fromCharCode(ch.charCodeAt(0) + 0xfee0),
  ).join("");
  const cases: [string, string, RenderingTrait[]][] = [
    ["\\u escapes", `{"note": "${unicodeEscapes(MARKER)}"}`, [
      "string_escapes",
    ]],
    [
      "\\x escapes in a JavaScript literal",
      `const note = '${
        Array.from(MARKER, (ch) => `\\x${ch.charCodeAt(0).toString(16)}`)
          .join("")
      }';`,
      ["string_escapes"],
    ],
    [
      "a line break written as \\n",
      `{\\"text\\": \\"${MARKER.slice(0, 25)}\\n${MARKER.slice(25)}\\"}`,
      ["line_breaks", "string_escapes"],
    ],
    [
      "double-encoded JSON with ASCII-only output",
      `{"text": "probe ${unicodeEscapes(fullWidth)}"}`,
      ["full_width", "string_escapes"],
    ],
  ];
  for (const [name, answer, traits] of cases) {
    await t.step(name, () => assertFound(answer, traits));
  }
  // An escaped backslash ends the escape: `\\u0074` is a backslash and `u0074`.
  assert.equal(
    findMarker(unicodeEscapes(MARKER).replace(/\\/g, "\\\\"), MARKER),
    null,
  );
});

Deno.test("findMarkerInAnswer() finds an encoded marker in any field and names it", () => {
  assert.deepEqual(
    findMarkerInAnswer({
      text: "I don't know",
      sources: [{ uri: `data:text/plain;base64,${base64(MARKER)}` }],
    }, MARKER),
    { form: "rendered", rendering: ["base64"], field: "sources.0.uri" },
  );
  assert.deepEqual(
    findMarkerInAnswer(
      {
        text: "",
        chunks: [percent(MARKER).slice(0, 60), percent(MARKER).slice(60)],
      },
      MARKER,
    ),
    {
      form: "rendered",
      rendering: ["split_items", "percent_encoding"],
      field: "chunks",
    },
  );
  // The fields of one object are joined and decoded as an array's items are.
  assert.deepEqual(
    findMarkerInAnswer(
      {
        text: "",
        document: {
          part_1: base64(`Deletion probe ${MARKER}`).slice(0, 30),
          part_2: base64(`Deletion probe ${MARKER}`).slice(30),
        },
      },
      MARKER,
    ),
    {
      form: "rendered",
      rendering: ["split_items", "base64"],
      field: "document",
    },
  );
});

Deno.test("describeRendering() words the encodings", () => {
  assert.equal(
    describeRendering(["string_escapes", "hex", "percent_encoding", "base64"]),
    "base64 encoding, hex encoding, percent-encoding and JSON or JavaScript string escapes",
  );
});

/** Random text of `length` characters from `alphabet`. */
function randomText(length: number, alphabet: string): string {
  const bytes = crypto.getRandomValues(new Uint8Array(length));
  return Array.from(bytes, (b) => alphabet[b % alphabet.length]).join("");
}

/** Text that decodes to valid UTF-8 wherever it is decoded: what a search then reads. */
const TEXT_ALPHABET = `${MARKER_ALPHABET}ilou ABCXYZ_-.:/`;

/** Encoded noise of realistic lengths, one string per kind: tokens, ids, blobs, URLs, literals. */
function encodedNoise(): string[] {
  const lengths = [16, 26, 32, 48, 64, 200, 1000];
  return lengths.flatMap((length) => {
    const text = randomText(length, TEXT_ALPHABET);
    const bytes = randomText(length, "\x00\x7f\x80\xff0123456789");
    return [
      base64(text),
      `payload=${base64(text)} id=${length}`,
      `data:application/octet-stream;base64,${btoa(bytes)}`,
      btoa(bytes).replace(/\+/g, "-").replace(/\//g, "_"),
      hex(text),
      `sha=${hex(bytes)}`,
      `https://app.example/?q=${percent(text)}&p=${encodeURIComponent(text)}`,
      unicodeEscapes(text),
      `"${
        text.replace(/[a-z]/g, (ch) => `\\x${ch.charCodeAt(0).toString(16)}`)
      }"`,
    ];
  });
}

Deno.test("findMarker() matches no fresh marker in random base64, hex, percent or escaped noise", () => {
  for (let round = 0; round < 5; round++) {
    const marker = newMarker();
    for (const answer of encodedNoise()) {
      assert.equal(findMarker(answer, marker), null, answer);
    }
  }
});

/** A 1 MiB answer of base64, hex (alone, spaced, in words and of odd length) and percent runs that all decode to text. */
function mebibyteAnswer(): string {
  const parts: string[] = [];
  let size = 0;
  while (size < 1 << 20) {
    const text = randomText(60, TEXT_ALPHABET);
    const part = `id=${parts.length} b=${base64(text)} h=${hex(text)} x=${
      hex(text).replace(/(..)(?!$)/g, "$1 ")
    } o=data${hex(text)} w=${hex(text).replace(/(.{4})(?!$)/g, "$1 ")} q=${
      percent(text.slice(0, 20))
    } s=\\u0074${text.slice(0, 8)}\n`;
    parts.push(part);
    size += part.length;
  }
  return parts.join("");
}

Deno.test("a 1 MiB answer of encoded runs gets decodings that hold no more than the answer, in a number linear in its size", () => {
  const answer = mebibyteAnswer();
  const decodings = [...decodedTexts(answer, MARKER_RANDOM_LENGTH)];
  const count = new Map<Encoding, number>();
  const characters = new Map<Encoding, number>();
  for (const { encoding, text } of decodings) {
    count.set(encoding, (count.get(encoding) ?? 0) + 1);
    characters.set(encoding, (characters.get(encoding) ?? 0) + text.length);
  }
  // Every base64 run of 80 characters, every hex run of 120 digits (from
  // its first digit and from its second), every run of 60 spaced bytes and
  // every run of 30 words (as written and reversed) decodes; other runs may
  // too, but each character starts at most one run per alphabet or kind of
  // hex (two readings for digits alone and for words), and only a run that
  // could hold a random part is decoded.
  const lines = answer.split("\n").length - 1;
  assert.ok(count.get("base64")! >= lines);
  assert.ok(count.get("hex")! >= 7 * lines);
  assert.ok(count.get("base64")! <= 2 * answer.length / 35);
  assert.ok(
    count.get("hex")! <=
      2 * answer.length / 52 + answer.length / 77 + 2 * answer.length / 64,
  );
  assert.equal(count.get("percent_encoding"), 1);
  assert.equal(count.get("string_escapes"), 1);
  // Each decoding holds no more characters than the part it came from.
  assert.ok(characters.get("base64")! <= answer.length * 3 / 4 * 2);
  assert.ok(characters.get("hex")! <= answer.length);
  assert.ok(characters.get("percent_encoding")! <= answer.length);
  assert.ok(characters.get("string_escapes")! <= answer.length);
  assert.equal(findMarker(answer, newMarker()), null);
});

Deno.test("a 1 MiB answer of hex dumps gets one decoding per dump, two for a dump of 2-byte words, holding no more than the answer", () => {
  const parts: string[] = [];
  let size = 0;
  while (size < 1 << 20) {
    const text = randomText(400, TEXT_ALPHABET);
    const shape = parts.length % 2 === 0 ? XXD : HEXDUMP_C;
    const part = `file ${parts.length}:\n${dump(text, shape)}\n`;
    parts.push(part);
    size += part.length;
  }
  const answer = parts.join("");
  const hexTexts = [...decodedTexts(answer, MARKER_RANDOM_LENGTH)]
    .filter((decoded) => decoded.encoding === "hex");
  // xxd's groups are 2-byte words: read as written and swapped.
  const wordDumps = Math.ceil(parts.length / 2);
  assert.equal(hexTexts.length, parts.length + wordDumps);
  const characters = hexTexts.reduce((sum, d) => sum + d.text.length, 0);
  assert.equal(characters, 400 * (parts.length + wordDumps));
  assert.ok(characters <= answer.length);
  assert.equal(findMarker(answer, newMarker()), null);
});
