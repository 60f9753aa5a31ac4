/** JSON on stdout: one object per answer, errors included (light enough for `cli.ts` to load eagerly). */

import { errorMessage, TraceError } from "../lib/errors.ts";
import type { CliIo } from "./_io.ts";

/** The JSON form of an error: its stable code and its one-line message. */
export function jsonError(error: unknown): { code: string; message: string } {
  return {
    code: error instanceof TraceError ? error.code : "internal",
    message: errorMessage(error),
  };
}

/** Writes `value` as one line of JSON on stdout. */
export function printJson(io: Pick<CliIo, "out">, value: unknown): void {
  io.out(JSON.stringify(value) + "\n");
}
