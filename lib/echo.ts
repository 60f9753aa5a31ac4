/**
 * User-supplied values as error messages echo them: whole when short, cut to
 * their first {@link ECHO_LIMIT} characters with "…" and their length when
 * not, so a pasted blob cannot bury the sentence that says what to do; and
 * with the characters a terminal or a page would act on or hide (controls,
 * bidi overrides, zero-width and other format characters) escaped as the
 * terminal and the pages escape them (`lib/display.ts`), so a value typed
 * into a URL cannot reorder or forge the message that repeats it.
 *
 * @module
 */

import { terminalSafe, terminalSafeJson } from "./display.ts";

/** Most characters of a user-supplied value an error message shows. */
export const ECHO_LIMIT = 80;

/** `value` as typed when short, else `abc… (5000 characters)`; a hidden character as `\u{202e}`. */
export function clipValue(value: string): string {
  if (value.length <= ECHO_LIMIT) return terminalSafe(value);
  return `${terminalSafe(head(value))}… (${value.length} characters)`;
}

/** `value` JSON-quoted when short, else `"abc…" (5000 characters)`; a hidden character as `\u202e`, as JSON spells it. */
export function quoteValue(value: string): string {
  if (value.length <= ECHO_LIMIT) {
    return terminalSafeJson(JSON.stringify(value));
  }
  return `${
    terminalSafeJson(JSON.stringify(`${head(value)}…`))
  } (${value.length} characters)`;
}

/** The first characters of `value`, never half of a surrogate pair. */
function head(value: string): string {
  const end = isHighSurrogate(value.charCodeAt(ECHO_LIMIT - 1))
    ? ECHO_LIMIT - 1
    : ECHO_LIMIT;
  return value.slice(0, end);
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
