/**
 * Answers are bounded: an answer whose JSON is longer than the bound has its
 * largest lists halved, one at a time, until it fits, and then says which
 * lists were cut and how much of each was kept. Cutting is deterministic (the
 * head of a list is kept), so the same answer is cut the same way twice.
 *
 * @module
 */

/** One list that was cut. */
export interface Cut {
  /** Where the list is, e.g. `report.samples` or `events`. */
  path: string;
  kept: number;
  total: number;
}

/** What a cut answer says about itself. */
export interface Truncation {
  max_chars: number;
  cuts: Cut[];
  note: string;
}

const NOTE =
  "the answer was longer than the output bound, so the lists named in cuts keep only their first items; narrow the request (a smaller limit, more filters, one run or system) to see the rest";

interface Found {
  path: string;
  list: unknown[];
  size: number;
}

function largestList(
  value: unknown,
  path: string,
  best: Found | null,
): Found | null {
  if (Array.isArray(value)) {
    const size = value.length > 0 ? JSON.stringify(value).length : 0;
    if (size > 0 && (best === null || size > best.size)) {
      best = { path, list: value, size };
    }
    value.forEach((item, i) => {
      best = largestList(item, `${path}[${i}]`, best);
    });
  } else if (value !== null && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) {
      best = largestList(item, path === "" ? key : `${path}.${key}`, best);
    }
  }
  return best;
}

function withTruncation(value: object, truncation: Truncation): object {
  return { ...value, truncated: truncation };
}

/**
 * Returns `value` when its JSON fits in `maxChars`, else a copy with its
 * largest lists cut and a `truncated` field saying so; when even empty lists
 * do not fit, an answer that says only that.
 */
export function boundAnswer(value: object, maxChars: number): object {
  if (JSON.stringify(value).length <= maxChars) return value;
  const copy = structuredClone(value) as object;
  const cuts = new Map<string, Cut>();
  const truncation = (): Truncation => ({
    max_chars: maxChars,
    cuts: [...cuts.values()],
    note: NOTE,
  });
  for (;;) {
    const found = largestList(copy, "", null);
    if (found === null) break;
    const kept = Math.floor(found.list.length / 2);
    const total = cuts.get(found.path)?.total ?? found.list.length;
    cuts.set(found.path, { path: found.path, kept, total });
    found.list.length = kept;
    const answer = withTruncation(copy, truncation());
    if (JSON.stringify(answer).length <= maxChars) return answer;
  }
  return {
    truncated: truncation(),
    error:
      "the answer does not fit in the output bound even with every list emptied; narrow the request",
  };
}
