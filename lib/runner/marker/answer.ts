/**
 * Where a marker is in a /query answer. The contract asks for `{text}`, but
 * an application's answer often carries more: the sources it cites, the
 * chunks it retrieved, scores keyed by document. The deleted text is as
 * retrievable there as in `text`, so every string of the answer counts,
 * values and keys, at any depth: `text` first, then the rest in the
 * answer's order. The place is reported as a path of key names, never as
 * answer text: a key that does not read as a name is shown as `*`, and a
 * key that holds the marker as `(key)`.
 *
 * Each string is folded on its own, and the adjacent strings of one array,
 * and the string values of one object adjacent in its key order, also
 * joined together: a streamed answer splits the marker across its chunks
 * (`["tra", "ce_", …]`), an application that stores text in chunks returns
 * them as fields (`{"chunk_0": …, "chunk_1": …}`), and the place is then the
 * array or the object ({@link WHOLE_ANSWER} for the answer itself). Keys are
 * never joined. Every string is searched at most twice (alone, and in the
 * one run of its array or object), so the false-match bound of
 * docs/report.md holds for the whole answer.
 *
 * A key may hold a bearer-token-like value and still read as a name under
 * {@link PATH_KEY}, which allows `-`: such a key is printed in a path.
 * Secrets are kept out of answers at the transport, not here.
 *
 * @module
 */

import { findMarker, type MarkerMatch, RENDERING_TRAITS } from "./find.ts";

/** A marker found in an answer, and where. */
export interface AnswerMatch extends MarkerMatch {
  /** `text`, or the path of another field (`sources.0.content`, `scores.(key)`). */
  field: string;
}

/** The place of a marker split across the answer object's own fields: its path has no key. */
export const WHOLE_ANSWER = "(answer)";

/** A key a path may show: a name, as JSON field names are spelled. */
const PATH_KEY = /^[A-Za-z0-9_:-]{1,64}$/;

/** Longest path shown; a deeper one keeps its start and its end. */
const MAX_PATH_SEGMENTS = 8;

/** Looks for `marker` anywhere in `answer`: `text` first, then every other value and key. */
export function findMarkerInAnswer(
  answer: Readonly<Record<string, unknown>>,
  marker: string,
): AnswerMatch | null {
  const text = answer.text;
  if (typeof text === "string") {
    const match = findMarker(text, marker);
    if (match) return { ...match, field: "text" };
  }
  const rest = Object.entries(answer).filter(([key]) =>
    key !== "text" || typeof text !== "string"
  );
  // `text` was searched alone above; the join takes it in its place among the fields.
  return searchEntries(rest, [], marker) ??
    searchJoinedItems(Object.values(answer), [], marker);
}

/** Searches `value`, whose place is `path`: strings, array items, then an object's entries, each container's adjacent strings joined last. */
function searchValue(
  value: unknown,
  path: readonly string[],
  marker: string,
): AnswerMatch | null {
  if (typeof value === "string") {
    const match = findMarker(value, marker);
    return match ? { ...match, field: pathOf(path) } : null;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = searchValue(value[i], [...path, String(i)], marker);
      if (found) return found;
    }
    return searchJoinedItems(value, path, marker);
  }
  if (value === null || typeof value !== "object") return null;
  return searchEntries(Object.entries(value), path, marker) ??
    searchJoinedItems(Object.values(value), path, marker);
}

/**
 * Searches each run of two or more adjacent strings of `items` (an array's
 * items, or an object's values in its key order) joined together; a match
 * is placed at the array or object and rendered as split.
 */
function searchJoinedItems(
  items: readonly unknown[],
  path: readonly string[],
  marker: string,
): AnswerMatch | null {
  for (const run of stringRuns(items)) {
    const match = findMarker(run.join(""), marker);
    if (match) {
      return {
        form: "rendered",
        rendering: RENDERING_TRAITS.filter((trait) =>
          trait === "split_items" || match.rendering.includes(trait)
        ),
        field: path.length === 0 ? WHOLE_ANSWER : pathOf(path),
      };
    }
  }
  return null;
}

/** The runs of two or more adjacent strings in `items`. */
function stringRuns(items: readonly unknown[]): string[][] {
  const runs: string[][] = [];
  let run: string[] = [];
  for (const item of [...items, null]) {
    if (typeof item === "string") {
      run.push(item);
      continue;
    }
    if (run.length >= 2) runs.push(run);
    run = [];
  }
  return runs;
}

/** Searches each key, then its value, in order. */
function searchEntries(
  entries: readonly [string, unknown][],
  path: readonly string[],
  marker: string,
): AnswerMatch | null {
  for (const [key, item] of entries) {
    const inKey = findMarker(key, marker);
    if (inKey) return { ...inKey, field: pathOf([...path, "(key)"]) };
    const place = PATH_KEY.test(key) ? key : "*";
    const found = searchValue(item, [...path, place], marker);
    if (found) return found;
  }
  return null;
}

function pathOf(segments: readonly string[]): string {
  if (segments.length <= MAX_PATH_SEGMENTS) return segments.join(".");
  const half = MAX_PATH_SEGMENTS / 2;
  return [...segments.slice(0, half), "…", ...segments.slice(-half)].join(".");
}
