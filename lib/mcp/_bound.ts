/**
 * Answers are bounded: an answer whose JSON is longer than the bound has its
 * largest lists halved, one at a time, until it fits, and then says which
 * lists were cut and how much of each was kept, under `truncated` (or under
 * `output_truncated` when the answer has a `truncated` field of its own, as
 * `trace.external_runs`' boolean, which then stays as the tool set it).
 * Cutting is deterministic (the head of a list is kept), so the same answer
 * is cut the same way twice.
 * A tool may keep a list whole (only lists inside its items are cut) and may
 * let an object's entries be cut like a list's items.
 *
 * A tool that pages (a cursor or an offset continues after the last item
 * shown) bounds its answer with {@link shrinkPageToFit}: it shrinks the page
 * and never cuts the page's list, since the next page would skip what was
 * cut; an item over the bound on its own is cut inside instead. An answer
 * already cut at a bound is not cut again there (the dispatcher bounds every
 * answer, a paging tool's too).
 *
 * @module
 */

/** One list that was cut. */
export interface Cut {
  /** Where the list is, e.g. `report.samples` or `events[0].resources`. */
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

/** How {@link boundAnswer} may cut one answer; by default any list, and no object. */
export interface BoundRules {
  /**
   * True for a list never cut itself, only inside its items: a page whose
   * cursor continues after its last item would otherwise skip what was cut.
   */
  keepsWhole?: (path: string) => boolean;
  /** True for an object whose entries are cut like a list's items (keeping the first). */
  cutsEntries?: (path: string) => boolean;
  /** What `truncated.note` says instead of the general note. */
  note?: string;
}

const NOTE =
  "the answer was longer than the output bound, so the lists named in cuts keep only their first items; narrow the request (a smaller limit, more filters, one run or system) to see the rest";

interface Found {
  path: string;
  length: number;
  size: number;
  /** Keeps the first `kept` items (or entries). */
  keep(kept: number): void;
}

function larger(best: Found | null, found: Found): Found {
  return best === null || found.size > best.size ? found : best;
}

function largestList(
  value: unknown,
  path: string,
  best: Found | null,
  rules: BoundRules,
): Found | null {
  if (Array.isArray(value)) {
    if (value.length > 0 && !rules.keepsWhole?.(path)) {
      best = larger(best, {
        path,
        length: value.length,
        size: JSON.stringify(value).length,
        keep: (kept) => {
          value.length = kept;
        },
      });
    }
    value.forEach((item, i) => {
      best = largestList(item, `${path}[${i}]`, best, rules);
    });
  } else if (value !== null && typeof value === "object") {
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record);
    if (keys.length > 0 && rules.cutsEntries?.(path)) {
      best = larger(best, {
        path,
        length: keys.length,
        size: JSON.stringify(record).length,
        keep: (kept) => keys.slice(kept).forEach((key) => delete record[key]),
      });
    }
    for (const [key, item] of Object.entries(record)) {
      const at = path === "" ? key : `${path}.${key}`;
      best = largestList(item, at, best, rules);
    }
  }
  return best;
}

/** A page of items whose answer can be built for fewer of them. */
export interface ShrinkablePage<T extends object> {
  /** Where the answer holds the page's items (`events`, `runs`): a list never cut itself. */
  list: string;
  /** How many items the full page holds. */
  size: number;
  /** The answer of the full page. */
  answer: T;
  /** The answer of a page of the first `size` items, with its own cursor or next offset. */
  answerOf: (size: number) => T | Promise<T>;
}

/** How {@link shrinkPageToFit} cuts inside a page's items (the page's list is kept whole). */
export type PageRules = Omit<BoundRules, "keepsWhole">;

/**
 * The answer of the page halved (rounding up) until its JSON fits in
 * `maxChars` or it holds one item, then bounded by {@link boundAnswer}
 * with the page's list kept whole: an item still over the bound alone is
 * cut inside (as `rules` allow), never dropped, so the cursor or next
 * offset continues right after it.
 */
export async function shrinkPageToFit<T extends object>(
  page: ShrinkablePage<T>,
  maxChars: number,
  rules: PageRules = {},
): Promise<object> {
  let { size, answer } = page;
  while (size > 1 && JSON.stringify(answer).length > maxChars) {
    size = Math.ceil(size / 2);
    answer = await page.answerOf(size);
  }
  return boundAnswer(answer, maxChars, {
    ...rules,
    keepsWhole: (path) => path === page.list,
  });
}

/** Where a cut answer says so: a client reading the tool's own `truncated` must not meet an object there. */
function truncationKey(value: object): string {
  return "truncated" in value ? "output_truncated" : "truncated";
}

/**
 * Whether `value` was already cut at `maxChars` (a paging tool bounds its
 * own answer): cutting it again would cut its report of the cut and name
 * it under the wrong key.
 */
function isBounded(value: object, maxChars: number): boolean {
  const record = value as Record<string, unknown>;
  return ["truncated", "output_truncated"].some((key) => {
    const said = record[key];
    return typeof said === "object" && said !== null &&
      (said as Partial<Truncation>).max_chars === maxChars;
  });
}

/**
 * Returns `value` when its JSON fits in `maxChars` or it was already cut at
 * that bound, else a copy with its largest lists cut (as `rules` allow) and
 * a {@link Truncation} saying so (see the module doc for its key); when even
 * empty lists do not fit, an answer that says only that.
 */
export function boundAnswer(
  value: object,
  maxChars: number,
  rules: BoundRules = {},
): object {
  if (JSON.stringify(value).length <= maxChars || isBounded(value, maxChars)) {
    return value;
  }
  const key = truncationKey(value);
  const copy = structuredClone(value) as object;
  const cuts = new Map<string, Cut>();
  const truncation = (): Truncation => ({
    max_chars: maxChars,
    cuts: [...cuts.values()],
    note: rules.note ?? NOTE,
  });
  for (;;) {
    const found = largestList(copy, "", null, rules);
    if (found === null) break;
    const kept = Math.floor(found.length / 2);
    const total = cuts.get(found.path)?.total ?? found.length;
    cuts.set(found.path, { path: found.path, kept, total });
    found.keep(kept);
    const answer = { ...copy, [key]: truncation() };
    if (JSON.stringify(answer).length <= maxChars) return answer;
  }
  return {
    [key]: truncation(),
    error:
      "the answer does not fit in the output bound even with every list emptied; narrow the request",
  };
}
