/**
 * How a memory pipeline renders its answers before returning them. Real
 * applications rarely hand back stored text byte for byte: a chat front end
 * escapes Markdown, a web view uses character references (some write a
 * styled letter as a named one, `&topf;` for `𝕥`), a model changes
 * case and separators, a layout step wraps lines or uses full-width forms, a
 * spoof or a font fallback writes Cyrillic look-alikes for Latin letters.
 * Others ship the stored text encoded: as an attachment's data URI, as hex
 * (alone, a byte at a time with spaces between, or as `hexdump -C` or
 * `od -x` dumps a file), in a link's
 * percent-encoded query, or as a JSON string escaped twice. Each
 * rendering here is one of those, so a reference system can leak a deleted
 * record in another spelling.
 *
 * @module
 */

/** The renderings an answer can go through, applied in the order given. */
export const ANSWER_RENDERINGS = [
  "markdown",
  "html",
  "html-named",
  "reworded",
  "full-width",
  "wrapped",
  "homoglyphs",
  "data-uri",
  "hex",
  "spaced-hex",
  "hexdump",
  "od-words",
  "percent-url",
  "escaped-json",
] as const;

/** One of {@link ANSWER_RENDERINGS}. */
export type AnswerRendering = typeof ANSWER_RENDERINGS[number];

/** Applies `renderings` to an answer, in order. */
export function renderAnswer(
  text: string,
  renderings: readonly AnswerRendering[],
): string {
  return renderings.reduce((out, rendering) => RENDERERS[rendering](out), text);
}

const RENDERERS: Readonly<Record<AnswerRendering, (text: string) => string>> = {
  markdown: escapeMarkdown,
  html: toHtml,
  "html-named": toNamedReferences,
  reworded: reword,
  "full-width": toFullWidth,
  wrapped: wrapLines,
  homoglyphs: toCyrillicLookAlikes,
  "data-uri": toDataUri,
  hex: toHex,
  "spaced-hex": toSpacedHex,
  hexdump: toHexdump,
  "od-words": toOdWords,
  "percent-url": toSearchLink,
  "escaped-json": toEscapedJson,
};

/** Backslash-escapes what Markdown would read as markup (`trace\_canary\_…`). */
function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_[\]#|<>]/g, (ch) => `\\${ch}`);
}

/**
 * HTML as some renderers write it: markup characters and underscores as named
 * references (`&lowbar;`), digits as numeric ones (`&#55;`), lines as `<br>`.
 */
function toHtml(text: string): string {
  const escaped = text.replace(/[&<>"'_0-9]/g, (ch) => HTML_REFERENCES[ch]!);
  return `<p>${escaped.split("\n").join("<br>\n")}</p>`;
}

/**
 * HTML from a "fancy text" styler: each Latin letter as the named reference
 * of its double-struck form (`&topf;` for `𝕥`), digits as they are, and the
 * answer wrapped in a span whose title holds a `>` (`<span title="memory >
 * answer">`), as a browser reads it.
 */
function toNamedReferences(text: string): string {
  // One pass: a second would restyle the letters of the `&amp;` the first wrote.
  const styled = text.replace(
    /[&<>"']|[A-Za-z]/g,
    (ch) => HTML_REFERENCES[ch] ?? `&${ch}opf;`,
  );
  return `<span title="memory > answer">${styled}</span>`;
}

const HTML_REFERENCES: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
  _: "&lowbar;",
  ...Object.fromEntries(
    Array.from({ length: 10 }, (_, d) => [String(d), `&#${48 + d};`]),
  ),
};

/** A model repeating what it found in its own words: upper case, separators as spaces. */
function reword(text: string): string {
  return `AS I RECALL: ${text.toUpperCase().replace(/[_-]/g, " ")}`;
}

/** Printable ASCII as full-width forms (U+FF01–FF5E), spaces as ideographic spaces. */
function toFullWidth(text: string): string {
  return text.replace(
    /[!-~ ]/g,
    (ch) =>
      ch === " " ? "\u3000" : String.fromCharCode(ch.charCodeAt(0) + 0xfee0),
  );
}

/** Hard-wraps every line at 16 characters, mid-word, with a soft hyphen at each break. */
function wrapLines(text: string): string {
  return text.split("\n").map((line) =>
    (line.match(/.{1,16}/gsu) ?? [""]).join("\u00ad\n")
  ).join("\n");
}

/**
 * Latin letters with a Cyrillic look-alike, and that look-alike. Written out
 * here rather than taken from the runner's table, so the reference suite
 * checks that table instead of sharing it; a test keeps the two in step.
 */
const CYRILLIC_LOOK_ALIKES: Readonly<Record<string, string>> = {
  a: "\u0430",
  c: "\u0441",
  d: "\u0501",
  e: "\u0435",
  h: "\u04bb",
  i: "\u0456",
  j: "\u0458",
  o: "\u043e",
  p: "\u0440",
  q: "\u051b",
  s: "\u0455",
  w: "\u051d",
  x: "\u0445",
  y: "\u0443",
  A: "\u0410",
  B: "\u0412",
  C: "\u0421",
  E: "\u0415",
  H: "\u041d",
  K: "\u041a",
  M: "\u041c",
  O: "\u041e",
  P: "\u0420",
  T: "\u0422",
  X: "\u0425",
};

/** Every Latin letter that has a Cyrillic look-alike written with it (`trасе_саnаrу…`). */
function toCyrillicLookAlikes(text: string): string {
  return text.replace(/[A-Za-z]/g, (ch) => CYRILLIC_LOOK_ALIKES[ch] ?? ch);
}

const UTF8 = new TextEncoder();

/** The answer as an attachment: a base64 `data:` URI after a label, as an API ships a document's bytes. */
function toDataUri(text: string): string {
  const binary = Array.from(
    UTF8.encode(text),
    (byte) => String.fromCharCode(byte),
  ).join("");
  return `attachment: data:text/plain;base64,${btoa(binary)}`;
}

/** Lowercase hex of the answer's UTF-8 bytes, two digits a byte. */
function toHex(text: string): string {
  return hexBytes(text).join("");
}

/** Lowercase hex of the answer's UTF-8 bytes with a space between bytes, as a hex dump writes them. */
function toSpacedHex(text: string): string {
  return hexBytes(text).join(" ");
}

/** Bytes a line of a `hexdump -C` dump holds. */
const DUMP_WIDTH = 16;

/**
 * The answer's UTF-8 bytes as `hexdump -C` prints a file: each line an
 * offset, 16 bytes in two halves and the printable ones between bars, then
 * a line with the offset after the last byte.
 */
function toHexdump(text: string): string {
  const bytes = UTF8.encode(text);
  const lines: string[] = [];
  for (let offset = 0; offset < bytes.length; offset += DUMP_WIDTH) {
    const row = bytes.subarray(offset, offset + DUMP_WIDTH);
    const digits = Array.from(row, hexByte);
    const columns = `${digits.slice(0, 8).join(" ")}  ${
      digits.slice(8).join(" ")
    }`.padEnd(3 * DUMP_WIDTH);
    const printable = Array.from(
      row,
      (byte) => byte >= 0x20 && byte < 0x7f ? String.fromCharCode(byte) : ".",
    ).join("");
    lines.push(`${dumpOffset(offset)}  ${columns}  |${printable}|`);
  }
  lines.push(dumpOffset(bytes.length));
  return lines.join("\n");
}

function dumpOffset(offset: number): string {
  return offset.toString(16).padStart(8, "0");
}

/**
 * The answer's UTF-8 bytes as `od -x` prints a file on a little-endian
 * machine: each line an octal offset, then 16 bytes as 2-byte words with the
 * low byte written last (`7274` for `tr`), an odd last byte padded with a
 * zero byte, then a line with the offset after the last byte.
 */
function toOdWords(text: string): string {
  const bytes = UTF8.encode(text);
  const lines: string[] = [];
  for (let offset = 0; offset < bytes.length; offset += DUMP_WIDTH) {
    const words: string[] = [];
    const end = Math.min(offset + DUMP_WIDTH, bytes.length);
    for (let at = offset; at < end; at += 2) {
      words.push(hexByte(bytes[at + 1] ?? 0) + hexByte(bytes[at]!));
    }
    lines.push(`${octalOffset(offset)} ${words.join(" ")}`);
  }
  lines.push(octalOffset(bytes.length));
  return lines.join("\n");
}

function octalOffset(offset: number): string {
  return offset.toString(8).padStart(7, "0");
}

/** Each UTF-8 byte of `text` as two lowercase hex digits. */
function hexBytes(text: string): string[] {
  return Array.from(UTF8.encode(text), hexByte);
}

/**
 * A search link whose query carries the answer with every UTF-8 byte
 * percent-encoded (`%74%72…`), as some front ends build links rather than
 * leaving unreserved characters as they are.
 */
function toSearchLink(text: string): string {
  const query = Array.from(
    UTF8.encode(text),
    (byte) => `%${hexByte(byte).toUpperCase()}`,
  ).join("");
  return `link: https://example.invalid/search?q=${query}`;
}

/**
 * The answer as the string of a JSON document written into the answer text,
 * every UTF-16 unit escaped as `\uXXXX`: JSON encoded twice, once by the
 * application and once by the response.
 */
function toEscapedJson(text: string): string {
  const escaped = Array.from(
    { length: text.length },
    (_, i) => `\\u${text.charCodeAt(i).toString(16).padStart(4, "0")}`,
  ).join("");
  return `record: {"text":"${escaped}"}`;
}

function hexByte(byte: number): string {
  return byte.toString(16).padStart(2, "0");
}
