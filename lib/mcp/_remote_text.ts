/**
 * What a client on another machine (`/mcp` over HTTP) is told instead of
 * this machine's paths and shell advice. Answers and refusals are written
 * for the CLI's user, who knows the data directory and can pass
 * `--data-dir`; a remote client can do neither, and the server's directory
 * layout is not its business. Paths under the data directory keep their
 * part below it (`external/run-….json`), which still tells one file from
 * another.
 *
 * @module
 */

import { resolve } from "node:path";
import { escapeRegExp } from "../regexp.ts";

/** What the data directory itself is called in a remote answer. */
const DATA_DIR_WORDS = "the server's data directory";

/** Advice only a shell on this machine can follow. */
const LOCAL_ADVICE = /;? ?check --data-dir(?: \/ --db)?/g;

/** `text` with the data directory's paths made relative and `--data-dir` advice left out. */
export function remoteText(text: string, dataDir: string): string {
  return remoteRewriter(dataDir)(text);
}

/**
 * {@link remoteText} for the data directory `dataDir`, its pattern compiled
 * once for every text it rewrites.
 */
export function remoteRewriter(dataDir: string): (text: string) => string {
  const dir = resolve(dataDir);
  // The root directory is every path's prefix: there is nothing to hide.
  if (dir === "/") return (text) => text.replace(LOCAL_ADVICE, "");
  // Whole paths only: the directory, then a separator, a blank, punctuation or the end.
  const path = new RegExp(
    `(?<![\\w./-])${escapeRegExp(dir)}(/|(?=[\\s;,:)"'.]|$))`,
    "g",
  );
  return (text) =>
    text.replace(LOCAL_ADVICE, "").replace(
      path,
      (_match, slash: string) => slash === "/" ? "" : DATA_DIR_WORDS,
    );
}

/** `value` with {@link remoteText} applied to every string in it. */
export function remoteAnswer<T>(value: T, dataDir: string): T {
  return rewriteStrings(value, remoteRewriter(dataDir));
}

function rewriteStrings<T>(value: T, rewrite: (text: string) => string): T {
  if (typeof value === "string") return rewrite(value) as T;
  if (Array.isArray(value)) {
    return value.map((item) => rewriteStrings(item, rewrite)) as T;
  }
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).map((
        [key, item],
      ) => [key, rewriteStrings(item, rewrite)]),
    ) as T;
  }
  return value;
}

/** What a caller receives of `answer`: {@link remoteAnswer} for a remote caller, else `answer` itself. */
export function clientAnswer<T>(
  answer: T,
  caller: { remote?: boolean; dataDir: string },
): T {
  return clientPresenter(caller)(answer);
}

/**
 * {@link clientAnswer} for one caller, its rewriter built once for every
 * answer it presents (a paging tool presents each page it measures).
 */
export function clientPresenter(
  caller: { remote?: boolean; dataDir: string },
): <T>(answer: T) => T {
  if (!caller.remote) return (answer) => answer;
  const rewrite = remoteRewriter(caller.dataDir);
  return (answer) => rewriteStrings(answer, rewrite);
}
