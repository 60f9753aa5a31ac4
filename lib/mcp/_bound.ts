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
 * cut; an item over the bound on its own is cut inside instead.
 *
 * Every answer {@link boundAnswer} returns fits its bound (down to
 * {@link MIN_OUTPUT_CHARS}), so bounding it again (the dispatcher bounds
 * every answer, a paging tool's too) returns it as it is. When even empty
 * lists do not fit, the answer says only that, with the cuts that fit and a
 * paging tool's `truncated` (a boolean), `next_offset` and `next_cursor`
 * when they fit too, so a client can still go past what could not be shown.
 * The bound is measured on what the client receives (`present`: a remote
 * caller's answer names no path of this machine, which can lengthen it).
 *
 * @module
 */

import { DEFAULT_MAX_OUTPUT_CHARS } from "./context.ts";

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
  /** What the client receives of an answer, which the bound is measured on (default: the answer). */
  present?: (answer: object) => object;
}

/**
 * The smallest bound every answer is sure to fit: at a smaller one, an
 * answer that does not fit may be {@link minimalAnswer}, which can be
 * longer than the bound.
 */
export const MIN_OUTPUT_CHARS = 250;

/**
 * The output bound a context asks for, raised to {@link MIN_OUTPUT_CHARS}:
 * below it an answer could not be sure to fit, and a second bounding of
 * the shortest answer would rename its cut.
 */
export function outputBound(maxOutputChars: number | undefined): number {
  return Math.max(
    MIN_OUTPUT_CHARS,
    maxOutputChars ?? DEFAULT_MAX_OUTPUT_CHARS,
  );
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
 * The answer of the page halved (rounding up) until its JSON (as
 * `rules.present` gives it) fits in `maxChars` or it holds one item, then
 * bounded by {@link boundAnswer} with the page's list kept whole: an item
 * still over the bound alone is cut inside (as `rules` allow), never
 * dropped, so the cursor or next offset continues right after it.
 */
export async function shrinkPageToFit<T extends object>(
  page: ShrinkablePage<T>,
  maxChars: number,
  rules: PageRules = {},
): Promise<object> {
  const fits = fitsIn(maxChars, rules.present);
  let { size, answer } = page;
  let fitting = fits(answer);
  while (size > 1 && !fitting) {
    size = Math.ceil(size / 2);
    answer = await page.answerOf(size);
    fitting = fits(answer);
  }
  if (fitting) return answer;
  const bounded = boundAnswer(answer, maxChars, {
    ...rules,
    keepsWhole: (path) => path === page.list,
  });
  if (!("error" in bounded)) return bounded;
  const leftOut = { path: page.list, kept: 0, total: size };
  return withPageLeftOut(bounded, truncationKey(answer), leftOut, fits);
}

/** Whether an answer's JSON, as `present` gives it to the client, fits in `maxChars`. */
function fitsIn(
  maxChars: number,
  present: (answer: object) => object = (answer) => answer,
): (answer: object) => boolean {
  return (answer) => JSON.stringify(present(answer)).length <= maxChars;
}

/**
 * A "nothing fits" answer of a page that says first among its cuts that the
 * page's items were left out, since its cursor or next offset goes past them;
 * later cuts give way to it when both do not fit.
 */
function withPageLeftOut(
  bounded: object,
  key: "truncated" | "output_truncated",
  leftOut: Cut,
  fits: (answer: object) => boolean,
): object {
  const cuts = ((bounded as Record<string, unknown>)[key] as Truncation).cuts;
  cuts.unshift(leftOut);
  // The last cuts give way first: the note says the first are named.
  while (cuts.length > 1 && !fits(bounded)) cuts.pop();
  if (!fits(bounded)) cuts.shift();
  return bounded;
}

/** Where a cut answer says so: a client reading the tool's own `truncated` must not meet an object there. */
function truncationKey(value: object): "truncated" | "output_truncated" {
  return "truncated" in value ? "output_truncated" : "truncated";
}

/** What every answer too large even with its lists emptied says. */
const NOTHING_FITS =
  "the answer does not fit in the output bound even with every list emptied; cuts names what was left out; narrow the request";

/** Says that lists were cut and cuts names those that fit here. */
const NOTHING_FITS_NOTE = "cuts names the first lists cut";

/** Fields of a paging tool's answer a client needs to go past what was not shown. */
const PAGING_FIELDS = ["truncated", "next_offset", "next_cursor"] as const;

/**
 * The answer {@link boundAnswer} gives at `maxChars` when even empty lists
 * do not fit and nothing else does either (the documented floor: no cut
 * named, no paging field).
 */
export function minimalAnswer(
  maxChars: number,
  key: "truncated" | "output_truncated" = "truncated",
): object {
  return {
    [key]: { max_chars: maxChars, cuts: [], note: NOTHING_FITS_NOTE },
    error: NOTHING_FITS,
  };
}

/**
 * The answer when even empty lists do not fit: {@link minimalAnswer} with
 * the paging fields that fit, then as many of the first cuts as fit.
 */
function nothingFits(
  value: Record<string, unknown>,
  maxChars: number,
  cuts: Cut[],
  fits: (answer: object) => boolean,
): object {
  const key = truncationKey(value);
  const answer = minimalAnswer(maxChars, key) as Record<string, unknown>;
  for (const field of PAGING_FIELDS) {
    // Only the paging tool's own fields: `truncated` as the bound writes it is an object.
    const said = value[field];
    if (said === undefined || typeof said === "object" && said !== null) {
      continue;
    }
    const withField = { ...answer, [field]: said };
    if (fits(withField)) Object.assign(answer, { [field]: said });
  }
  const listed = (answer[key] as Truncation).cuts;
  for (const cut of cuts) {
    listed.push(cut);
    if (!fits(answer)) {
      listed.pop();
      break;
    }
  }
  return answer;
}

/**
 * Returns `value` when its JSON (as `rules.present` gives it) fits in
 * `maxChars`, else a copy with its largest lists cut (as `rules` allow) and
 * a {@link Truncation} saying so (see the module doc for its key); when even
 * empty lists do not fit, an answer that says only that. What it returns
 * fits `maxChars`, or is {@link minimalAnswer} when `maxChars` is below
 * {@link MIN_OUTPUT_CHARS}.
 */
export function boundAnswer(
  value: object,
  maxChars: number,
  rules: BoundRules = {},
): object {
  const fits = fitsIn(maxChars, rules.present);
  if (fits(value)) return value;
  const key = truncationKey(value);
  const copy = structuredClone(value) as Record<string, unknown>;
  const cuts = new Map<string, Cut>();
  for (;;) {
    const found = largestList(copy, "", null, rules);
    if (found === null) break;
    const kept = Math.floor(found.length / 2);
    const total = cuts.get(found.path)?.total ?? found.length;
    cuts.set(found.path, { path: found.path, kept, total });
    found.keep(kept);
    const truncation: Truncation = {
      max_chars: maxChars,
      cuts: [...cuts.values()],
      note: rules.note ?? NOTE,
    };
    const answer = { ...copy, [key]: truncation };
    if (fits(answer)) return answer;
  }
  return nothingFits(value as Record<string, unknown>, maxChars, [
    ...cuts.values(),
  ], fits);
}
