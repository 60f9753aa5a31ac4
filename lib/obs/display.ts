/**
 * Ids and other stored strings as a terminal may show them. The model
 * refuses control, separator and bidirectional characters in ids, but an
 * index written by an older build, or a field the model does not restrict,
 * may still hold them; printed raw they could move the cursor, forge a line
 * or make an id display as another name.
 *
 * @module
 */

// C0 and C1 controls, DEL, line and paragraph separators, bidi marks,
// embeddings, overrides and isolates, lone surrogates, and the backslash
// (so an escape can never be confused with the same text typed literally).
const UNSAFE =
  // deno-lint-ignore no-control-regex
  /[\\\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

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

function escapeChar(char: string): string {
  return char === "\\"
    ? "\\\\"
    : `\\u{${char.charCodeAt(0).toString(16).padStart(4, "0")}}`;
}

// What JSON.stringify leaves raw that a terminal would act on: DEL, C1
// controls, line and paragraph separators and bidi formatting characters
// (it escapes C0 controls and lone surrogates itself).
const JSON_UNSAFE =
  /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** JSON text with the characters a terminal would act on escaped as `\uXXXX`: still the same JSON. */
export function terminalSafeJson(json: string): string {
  return json.replace(
    JSON_UNSAFE,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}
