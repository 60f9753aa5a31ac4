/**
 * Ids and other stored or typed strings as a terminal, a page or an error
 * message may show them. The model refuses control, separator and
 * bidirectional characters in ids, but an index written by an older build,
 * a field the model does not restrict, or a value typed into a URL may
 * still hold them; printed raw they could move the cursor, forge a line or
 * make an id display as another name.
 *
 * @module
 */

// What no view shows raw: C0 and C1 controls, DEL, line and paragraph
// separators, bidi marks, embeddings, overrides and isolates, the
// zero-width and invisible formatting characters (U+200B to U+200D, U+2060
// to U+2064, U+FEFF) that make two different strings look the same, and
// every other format character (Unicode category Cf: the soft hyphen, the
// tag characters U+E0000 to U+E007F that can carry text no one sees, …).
// A terminal, a page and an error message escape the same characters, so
// an id reads alike in all three.
const BEYOND_C0 = String
  .raw`\u007f-\u009f\u061c\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\p{Cf}`;
const HIDDEN = String.raw`\u0000-\u001f${BEYOND_C0}`;
// With the `u` flag a surrogate pair is one character: only a lone half
// matches a surrogate range.
const LONE_SURROGATE = String.raw`[\ud800-\udfff]`;

// What a terminal escapes: the hidden characters, lone surrogates, and the
// backslash (so an escape can never be confused with the same text typed
// literally).
const UNSAFE = new RegExp(`[\\\\${HIDDEN}]|${LONE_SURROGATE}`, "gu");

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
const INVISIBLE = new RegExp(`[${HIDDEN}]|${LONE_SURROGATE}`, "gu");

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
    : `\\u{${char.codePointAt(0)!.toString(16).padStart(4, "0")}}`;
}

// What JSON.stringify leaves raw of the hidden characters (it escapes C0
// controls and lone surrogates itself, and a pretty-printed text's line
// feeds are its own).
const JSON_UNSAFE = new RegExp(`[${BEYOND_C0}]`, "gu");

/** JSON text with the characters a terminal would act on or hide escaped as `\uXXXX`: still the same JSON. */
export function terminalSafeJson(json: string): string {
  return escapedInJson(json);
}

/** JSON text with every character a page would hide or reorder escaped as `\uXXXX`: the same escape as {@link terminalSafeJson}. */
export function visibleJson(json: string): string {
  return escapedInJson(json);
}

/** `json` with each hidden character written as `\uXXXX` escapes (two for a character past U+FFFF, as JSON spells it). */
function escapedInJson(json: string): string {
  return json.replace(JSON_UNSAFE, (char) => {
    let escaped = "";
    for (let i = 0; i < char.length; i++) {
      escaped += `\\u${char.charCodeAt(i).toString(16).padStart(4, "0")}`;
    }
    return escaped;
  });
}
