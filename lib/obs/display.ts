/**
 * Ids and other stored strings as a terminal may show them. The model
 * refuses control, separator and bidirectional characters in ids, but an
 * index written by an older build, or a field the model does not restrict,
 * may still hold them; printed raw they could move the cursor, forge a line
 * or make an id display as another name.
 *
 * @module
 */

// What no view shows raw: C0 and C1 controls, DEL, line and paragraph
// separators, bidi marks, embeddings, overrides and isolates, and the
// zero-width and invisible formatting characters (U+200B to U+200D, U+2060
// to U+2064, U+FEFF) that make two different strings look the same. A
// terminal and a page escape the same characters, so an id reads alike in both.
const BEYOND_C0 = String
  .raw`\u007f-\u009f\u061c\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff`;
const HIDDEN = String.raw`\u0000-\u001f${BEYOND_C0}`;
const LONE_SURROGATE = String
  .raw`[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]`;

// What a terminal escapes: the hidden characters, lone surrogates, and the
// backslash (so an escape can never be confused with the same text typed
// literally).
const UNSAFE = new RegExp(`[\\\\${HIDDEN}]|${LONE_SURROGATE}`, "g");

/** `text` with every character that could disturb a terminal escaped as `\u{…}` (and `\` as `\\`). */
export function displaySafe(text: string): string {
  return text.replace(UNSAFE, escapeChar);
}

/**
 * `text` with the characters that could disturb a terminal escaped, a
 * backslash left as it is: for messages, which may name a Windows path.
 */
export function terminalSafe(text: string): string {
  return text.replace(
    UNSAFE,
    (char) => char === "\\" ? char : escapeChar(char),
  );
}

// What a page shows as an escape: the same characters but the backslash (a
// page marks its escapes, so typed text cannot pass for one).
const INVISIBLE = new RegExp(`[${HIDDEN}]|${LONE_SURROGATE}`, "g");

/** A run of text as shown: `escaped` runs are one character written as `\u{…}`. */
export interface DisplayPart {
  text: string;
  escaped: boolean;
}

/**
 * `text` cut into runs a page can show: controls, bidi formatting and
 * zero-width characters each become an escaped run (`\u{202e}`), so they
 * neither reorder nor hide what is around them. With `multiline`, line feeds
 * and tabs (and a carriage return before a line feed) stay as they are.
 */
export function displayParts(
  text: string,
  options: { multiline?: boolean } = {},
): DisplayPart[] {
  const parts: DisplayPart[] = [];
  let last = 0;
  for (const match of text.matchAll(INVISIBLE)) {
    const char = match[0];
    const at = match.index;
    if (
      options.multiline &&
      (char === "\n" || char === "\t" ||
        (char === "\r" && text[at + 1] === "\n"))
    ) continue;
    if (at > last) parts.push({ text: text.slice(last, at), escaped: false });
    parts.push({ text: escapeChar(char), escaped: true });
    last = at + char.length;
  }
  if (last < text.length) {
    parts.push({ text: text.slice(last), escaped: false });
  }
  return parts;
}

function escapeChar(char: string): string {
  return char === "\\"
    ? "\\\\"
    : `\\u{${char.charCodeAt(0).toString(16).padStart(4, "0")}}`;
}

// What JSON.stringify leaves raw of the hidden characters (it escapes C0
// controls and lone surrogates itself, and a pretty-printed text's line
// feeds are its own).
const JSON_UNSAFE = new RegExp(`[${BEYOND_C0}]`, "g");

/** JSON text with the characters a terminal would act on or hide escaped as `\uXXXX`: still the same JSON. */
export function terminalSafeJson(json: string): string {
  return escapedInJson(json);
}

/** JSON text with every character a page would hide or reorder escaped as `\uXXXX`: the same escape as {@link terminalSafeJson}. */
export function visibleJson(json: string): string {
  return escapedInJson(json);
}

/** `json` with each hidden character written as a `\uXXXX` escape. */
function escapedInJson(json: string): string {
  return json.replace(
    JSON_UNSAFE,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}
