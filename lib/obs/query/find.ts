/**
 * The incident finder's read: events a filter (and an opaque id, matched as
 * any kind of id) selects, grouped by task scope (application + root),
 * newest group first, with a keyset cursor.
 *
 * Bounded work per page: at most {@link FIND_WINDOW} matching events are
 * read, newest first (a filter no index narrows examines at most the newest
 * `SCAN_LIMIT` events per page, see `_scan.ts`), and grouped by root in the order their newest event
 * appears; each listed group is then counted (up to {@link MAX_GROUP_COUNT}
 * of its matching events) through the root index. A group is listed once,
 * on the page where its newest matching event falls: the cursor is the
 * newest event of the last group listed, and a later page skips roots that
 * have a matching event at or above it.
 *
 * @module
 */

import * as v from "valibot";
import type { TraceDb } from "../../db.ts";
import { ConfigError } from "../../errors.ts";
import { describeIssues } from "../../issues.ts";
import { canonicalJson, sha256Hex } from "../../canonical_json.ts";
import { assessCoverage, type CoverageAssessment } from "../coverage.ts";
import { OpaqueIdSchema } from "../model.ts";
import { requireObs } from "../schema.ts";
import {
  canonicalFilter,
  type CursorKey,
  decodeCursor,
  encodeCursor,
} from "./_cursor.ts";
import type { SqlWhere } from "./_filter_sql.ts";
import { findWhere, tenantWhere } from "./_find_sql.ts";
import { type FoundEvent, readFoundEvents } from "./_found_events.ts";
import { aboveFloor, kindStreams, SCAN_LIMIT, scanFloor } from "./_scan.ts";
import { groupTotals, type RootTotals } from "./_group_totals.ts";
import { parseTraceFilter, type TraceFilter } from "./filters.ts";
import { type IdMatch, matchOpaqueId } from "./id_match.ts";
import type { OutcomeVerification, ReadCompleteness } from "./query.ts";
import { inTurn, readStatement } from "./_turns.ts";
import { nextTurn } from "../_turn_line.ts";

export type { FoundEvent } from "./_found_events.ts";

/** Groups per page when none is asked for. */
export const DEFAULT_FIND_GROUPS = 20;
/** Most groups one page lists. */
export const MAX_FIND_GROUPS = 100;
/** Most matching events one page reads to find its groups. */
export const FIND_WINDOW = 1_000;
/** Latest matching events shown per group. */
export const GROUP_EVENTS_SHOWN = 5;

/** What the finder is asked. */
export interface FindQuery {
  /** Conjunctive filters (its own narrow `q` is ignored: pass `q` here). */
  filter?: TraceFilter;
  /** An opaque id matched as event, root, turn, run, thread, memory or resource id. */
  q?: string;
  /** Groups per page (default {@link DEFAULT_FIND_GROUPS}). */
  limit?: number;
  /** `next_cursor` of the previous page, under the same filter and `q`. */
  cursor?: string;
}

/** One task scope (application + root) the filter selects. */
export interface RootGroup extends RootTotals {
  application_id: string;
  root_trace_id: string;
  /** Latest matching events of this group read on this page (newest first). */
  latest: FoundEvent[];
}

/** One page of the finder. */
export interface FindPage {
  q: string | null;
  /** How `q` matched (`null` without `q`); empty when it matched nothing in scope. */
  q_matches: IdMatch[] | null;
  groups: RootGroup[];
  next_cursor: string | null;
  has_more: boolean;
  /**
   * How many matching events this page read to find its groups, and, for a
   * filter no index narrows, how many of the newest events it examined.
   */
  window: { limit: number; events_read: number; scan_limit: number | null };
  read_completeness: ReadCompleteness;
  instrumentation_coverage: CoverageAssessment["state"];
  outcome_verification: OutcomeVerification;
  coverage: CoverageAssessment;
}

const FindQuerySchema = v.strictObject(
  {
    filter: v.optional(v.unknown()),
    q: v.optional(OpaqueIdSchema),
    limit: v.optional(v.pipe(
      v.number("must be a number"),
      v.integer("must be an integer"),
      v.minValue(1, "must be at least 1"),
      v.maxValue(MAX_FIND_GROUPS, `must be at most ${MAX_FIND_GROUPS}`),
    )),
    cursor: v.optional(
      v.pipe(v.string(), v.maxLength(512, "is too long to be a cursor")),
    ),
  },
  (issue) =>
    issue.expected === "never"
      ? "unknown field; remove it"
      : "must be an object",
);

/** Reads one page of root groups, newest first. */
export async function findTraceRoots(
  db: TraceDb,
  query: FindQuery,
): Promise<FindPage> {
  const parsed = v.safeParse(FindQuerySchema, query);
  if (!parsed.success) {
    throw new ConfigError(
      `Invalid finder query: ${describeIssues(parsed.issues)}`,
    );
  }
  const { q, cursor } = parsed.output;
  const limit = parsed.output.limit ?? DEFAULT_FIND_GROUPS;
  const filter = parseTraceFilter(query.filter ?? {});
  await requireObs(db);
  const digest = findDigest(filter, q);
  const after = cursor === undefined ? null : decodeCursor(cursor, digest);
  const matches = q === undefined ? null : await matchOpaqueId(db, q, filter);
  const where = findWhere(filter, q, (matches ?? []).map((m) => m.field));
  const floor = await scanFloor(db, filter, after, q);
  await nextTurn();
  const window = await readFoundEvents(
    db,
    aboveFloor(where, floor),
    after,
    FIND_WINDOW + 1,
    kindStreams(filter, q),
  );
  const windowFull = window.length > FIND_WINDOW;
  const events = window.slice(0, FIND_WINDOW);
  const candidates = groupInOrder(events);
  const fresh = after
    ? await unseenGroups(db, where, after, candidates, limit + 1)
    : candidates.slice(0, limit + 1);
  const listed = fresh.slice(0, limit);
  const moreInWindow = fresh.length > limit;
  const lastListed = listed.at(-1)?.latest[0];
  const nextKey: CursorKey | null = moreInWindow && lastListed
    ? keyOf(lastListed)
    : windowFull
    ? keyOf(events.at(-1)!)
    : floor;
  await nextTurn();
  const totals = await groupTotals(db, where, tenantWhere(filter, "x"), listed);
  const groups = listed.map((group, i) => ({ ...group, ...totals[i]! }));
  await nextTurn();
  const coverage = await groupsCoverage(db, groups);
  return {
    q: q ?? null,
    q_matches: matches,
    groups,
    next_cursor: nextKey ? encodeCursor(nextKey, digest) : null,
    has_more: nextKey !== null,
    window: {
      limit: FIND_WINDOW,
      events_read: events.length,
      scan_limit: floor ? SCAN_LIMIT : null,
    },
    // Partial only when a bound cut the read: the window filled, or the
    // scan bound left older events unexamined. More groups than the page
    // lists (has_more) is paging, not a cut: every matching event was read.
    read_completeness: windowFull || floor !== null ? "partial" : "complete",
    instrumentation_coverage: coverage.state,
    outcome_verification: groups.some((g) => g.verified_outcomes > 0)
      ? "recorded"
      : "unknown",
    coverage,
  };
}

/** Binds a finder cursor to its filter and `q` (a query cursor never fits). */
function findDigest(filter: TraceFilter, q: string | undefined): string {
  const { q: _narrow, ...rest } = filter;
  return sha256Hex(
    canonicalJson({ find: canonicalFilter(rest), q: q ?? null }),
  ).slice(0, 32);
}

function keyOf(event: FoundEvent): CursorKey {
  return { ts: Date.parse(event.ts), seq: event.seq };
}

interface Candidate {
  application_id: string;
  root_trace_id: string;
  latest: FoundEvent[];
}

/** Groups events (newest first) by root, in the order each root first appears. */
function groupInOrder(events: readonly FoundEvent[]): Candidate[] {
  const groups = new Map<string, Candidate>();
  for (const event of events) {
    const key = `${event.application_id}\u0000${event.root_trace_id}`;
    const group = groups.get(key);
    if (!group) {
      groups.set(key, {
        application_id: event.application_id,
        root_trace_id: event.root_trace_id,
        latest: [event],
      });
    } else if (group.latest.length < GROUP_EVENTS_SHOWN) {
      group.latest.push(event);
    }
  }
  return [...groups.values()];
}

/** Candidates (in order, up to `want`) with no matching event at or above `after`: not listed before. */
async function unseenGroups(
  db: TraceDb,
  where: SqlWhere,
  after: CursorKey,
  candidates: Candidate[],
  want: number,
): Promise<Candidate[]> {
  const unseen: Candidate[] = [];
  for (let i = 0; i < candidates.length && unseen.length < want; i += want) {
    const chunk = candidates.slice(i, i + want);
    const seen = await readStatement(db, {
      sql: `SELECT g.key AS i FROM json_each(?) g WHERE EXISTS (
              SELECT 1 FROM obs_events e INDEXED BY obs_events_root
              WHERE e.application_id = json_extract(g.value, '$[0]')
                AND e.root_trace_id = json_extract(g.value, '$[1]')
                AND ${where.sql} AND (e.ts, e.seq) >= (?, ?))`,
      args: [
        JSON.stringify(chunk.map((c) => [c.application_id, c.root_trace_id])),
        ...where.args,
        after.ts,
        after.seq,
      ],
    });
    const skip = new Set(seen.rows.map((row) => Number(row.i)));
    chunk.forEach((c, j) => {
      if (!skip.has(j)) unseen.push(c);
    });
  }
  return unseen.slice(0, want);
}

async function groupsCoverage(
  db: TraceDb,
  groups: readonly RootGroup[],
): Promise<CoverageAssessment> {
  return await inTurn(db, () =>
    assessCoverage(db, {
      sql: `SELECT json_extract(value, '$[0]') AS application_id,
            json_extract(value, '$[1]') AS root_trace_id FROM json_each(?)`,
      args: [
        JSON.stringify(groups.map((g) => [g.application_id, g.root_trace_id])),
      ],
    }));
}
