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

/**
 * A list (or an object whose entries are cut like a list's items) at one
 * path of an answer: its JSON is measured once, then kept up to date as it
 * and the lists inside it are cut.
 */
interface CuttableList {
  path: string;
  /** The list itself, which may sit at more than one path. */
  value: object;
  length: number;
  /** The length of its JSON. */
  size: number;
  /** The nearest cuttable list it lies in, and in which of that one's items. */
  outer: CuttableList | null;
  item: number;
  /** The cuttable lists that lie in its items, nearest them, in the answer's order. */
  inner: CuttableList[];
  /** False once it is empty, or the item it lay in was cut. */
  live: boolean;
  /** Keeps the first `kept` items (or entries). */
  keep(kept: number): void;
}

/** The lists of `answer` that `rules` let the bound cut, in the order the answer holds them. */
function cuttableLists(answer: object, rules: BoundRules): CuttableList[] {
  const lists: CuttableList[] = [];
  const visit = (
    value: unknown,
    path: string,
    outer: CuttableList | null,
    item: number,
  ): void => {
    if (Array.isArray(value)) {
      const list = value.length > 0 && !rules.keepsWhole?.(path)
        ? found(lists, {
          path,
          value,
          length: value.length,
          outer,
          item,
          keep: (kept) => {
            value.length = kept;
          },
        })
        : null;
      // What lies in an item lies in this list when it may be cut, else in `outer`.
      value.forEach((inner, i) =>
        visit(inner, `${path}[${i}]`, list ?? outer, list ? i : item)
      );
    } else if (value !== null && typeof value === "object") {
      const record = value as Record<string, unknown>;
      const keys = Object.keys(record);
      const list = keys.length > 0 && rules.cutsEntries?.(path)
        ? found(lists, {
          path,
          value,
          length: keys.length,
          outer,
          item,
          keep: (kept) => keys.slice(kept).forEach((key) => delete record[key]),
        })
        : null;
      Object.entries(record).forEach(([key, inner], i) =>
        visit(
          inner,
          path === "" ? key : `${path}.${key}`,
          list ?? outer,
          list ? i : item,
        )
      );
    }
  };
  visit(answer, "", null, 0);
  return lists;
}

/** Adds a cuttable list to `lists` and to its outer list's, measuring it. */
function found(
  lists: CuttableList[],
  where: Omit<CuttableList, "size" | "inner" | "live">,
): CuttableList {
  const list: CuttableList = {
    ...where,
    size: JSON.stringify(where.value).length,
    inner: [],
    live: true,
  };
  lists.push(list);
  where.outer?.inner.push(list);
  return list;
}

/** The first of the largest lists still to cut, or `null`. */
function largestList(lists: readonly CuttableList[]): CuttableList | null {
  let best: CuttableList | null = null;
  for (const list of lists) {
    if (list.live && (best === null || list.size > best.size)) best = list;
  }
  return best;
}

/**
 * Cuts `list` to its first `kept` items and updates the sizes it changes:
 * its own and those of the lists it lies in, at every path it sits at,
 * while the lists in the items cut are no longer cut.
 */
function cutList(
  list: CuttableList,
  kept: number,
  lists: readonly CuttableList[],
): void {
  list.keep(kept);
  const size = JSON.stringify(list.value).length;
  const shrunk = list.size - size;
  for (const same of lists) {
    if (!same.live || same.value !== list.value) continue;
    for (let outer = same.outer; outer; outer = outer.outer) {
      outer.size -= shrunk;
    }
    same.size = size;
    same.length = kept;
    same.live = kept > 0;
    for (const inner of same.inner) if (inner.item >= kept) dropList(inner);
  }
}

function dropList(list: CuttableList): void {
  list.live = false;
  list.inner.forEach(dropList);
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
  const lists = cuttableLists(copy, rules);
  const cuts = new Map<string, Cut>();
  for (;;) {
    const largest = largestList(lists);
    if (largest === null) break;
    const kept = Math.floor(largest.length / 2);
    const total = cuts.get(largest.path)?.total ?? largest.length;
    cuts.set(largest.path, { path: largest.path, kept, total });
    cutList(largest, kept, lists);
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
