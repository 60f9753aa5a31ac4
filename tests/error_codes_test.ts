/** The codes HTTP error answers carry: each one the app can answer with is documented. */

import assert from "node:assert/strict";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { ERROR_CODES, TraceError } from "../lib/errors.ts";
import { CAUSE_CODES, CODE_BY_STATUS } from "../routes/_error_codes.ts";
import { CodedHttpException, errorResponse } from "../routes/_errors.ts";

const ROOT = new URL("../", import.meta.url);

/** The backquoted words of the paragraph of docs/operators.md that lists the codes. */
async function documentedCodes(): Promise<Set<string>> {
  const text = await Deno.readTextFile(new URL("docs/operators.md", ROOT));
  const start = text.indexOf("Every JSON error answer is");
  assert.ok(start >= 0, "docs/operators.md lists the error codes");
  const paragraph = text.slice(start, text.indexOf("\n\n", start));
  return new Set([...paragraph.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!));
}

/** Each status the routes throw a plain `HTTPException` with. */
async function thrownStatuses(): Promise<number[]> {
  const statuses = new Set<number>();
  for await (const path of sourceFiles(new URL("routes/", ROOT))) {
    const text = await Deno.readTextFile(path);
    for (const match of text.matchAll(/new HTTPException\(\s*(\d{3})/g)) {
      statuses.add(Number(match[1]));
    }
  }
  return [...statuses].sort();
}

async function* sourceFiles(dir: URL): AsyncGenerator<URL> {
  for await (const entry of Deno.readDir(dir)) {
    const url = new URL(entry.name + (entry.isDirectory ? "/" : ""), dir);
    if (entry.isDirectory) yield* sourceFiles(url);
    else if (/\.tsx?$/.test(entry.name)) yield url;
  }
}

function codeOf(error: unknown): string {
  return errorResponse(error).body.error.code;
}

Deno.test("every code an HTTP error answer carries is in docs/operators.md's list", async () => {
  const documented = await documentedCodes();
  const statuses = await thrownStatuses();
  assert.ok(statuses.includes(400), "the scan finds the routes' throws");
  const answered = new Set<string>([
    ...Object.values(CODE_BY_STATUS),
    ...CAUSE_CODES.map((code) =>
      codeOf(new CodedHttpException(501, "not configured", code))
    ),
    ...statuses.map((status) =>
      codeOf(new HTTPException(status as ContentfulStatusCode))
    ),
    ...ERROR_CODES.map((code) => codeOf(new TraceError(code, "refused"))),
    codeOf(new Error("unexpected")),
  ]);
  const undocumented = [...answered].filter((code) => !documented.has(code));
  assert.deepEqual(undocumented, []);
});
