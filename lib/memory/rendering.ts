/**
 * How a memory pipeline renders its answers before returning them. Real
 * applications rarely hand back stored text byte for byte: a chat front end
 * escapes Markdown, a web view uses character references, a model changes
 * case and separators, a layout step wraps lines or uses full-width forms.
 * Others ship the stored text encoded: as an attachment's data URI, as hex,
 * in a link's percent-encoded query, or as a JSON string escaped twice. Each
 * rendering here is one of those, so a reference system can leak a deleted
 * record in another spelling.
 *
 * @module
 */

/** The renderings an answer can go through, applied in the order given. */
export const ANSWER_RENDERINGS = [
  "markdown",
  "html",
  "reworded",
  "full-width",
  "wrapped",
  "data-uri",
  "hex",
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
  reworded: reword,
  "full-width": toFullWidth,
  wrapped: wrapLines,
  "data-uri": toDataUri,
  hex: toHex,
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
  return Array.from(UTF8.encode(text), hexByte).join("");
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
