/** JSON on stdout: one object per answer, errors included (light enough for `cli.ts` to load eagerly). */

import { terminalSafeJson } from "../lib/display.ts";
import { errorMessage, TraceError } from "../lib/errors.ts";
import type { CliIo } from "./_io.ts";

/** The JSON form of an error: its stable code and its one-line message. */
export function jsonError(error: unknown): { code: string; message: string } {
  return {
    code: error instanceof TraceError ? error.code : "internal",
    message: errorMessage(error),
  };
}

/**
 * `value` as JSON text for stdout. JSON.stringify escapes controls but
 * leaves format characters (a U+202E in a data directory's name) raw, and
 * `jq -r` would hand them to the terminal: they are written as `\uXXXX`
 * too, which parses to the same strings.
 */
export function jsonText(value: unknown, indent?: number): string {
  return terminalSafeJson(JSON.stringify(value, null, indent));
}

/** Writes `value` as one line of JSON on stdout. */
export function printJson(io: Pick<CliIo, "out">, value: unknown): void {
  io.out(jsonText(value) + "\n");
}
