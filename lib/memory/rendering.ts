/**
 * How a memory pipeline renders its answers before returning them. Real
 * applications rarely hand back stored text byte for byte: a chat front end
 * escapes Markdown, a web view uses character references, a model changes
 * case and separators, a layout step wraps lines or uses full-width forms.
 * Each rendering here is one of those, so a reference system can leak a
 * deleted record in another spelling.
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
