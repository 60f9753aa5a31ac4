/**
 * User-supplied values as error messages echo them: whole when short, cut to
 * their first {@link ECHO_LIMIT} characters with "…" and their length when
 * not, so a pasted blob cannot bury the sentence that says what to do.
 *
 * @module
 */

/** Most characters of a user-supplied value an error message shows. */
export const ECHO_LIMIT = 80;

/** `value` as typed when short, else `abc… (5000 characters)`. */
export function clipValue(value: string): string {
  if (value.length <= ECHO_LIMIT) return value;
  return `${head(value)}… (${value.length} characters)`;
}

/** `value` JSON-quoted when short, else `"abc…" (5000 characters)`. */
export function quoteValue(value: string): string {
  if (value.length <= ECHO_LIMIT) return JSON.stringify(value);
  return `${JSON.stringify(`${head(value)}…`)} (${value.length} characters)`;
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
