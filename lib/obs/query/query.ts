/**
 * Scoped, keyset-paginated reads of the index, newest first. Every page
 * states separately how complete the read was, how well the selected task
 * scopes were instrumented, and whether verified outcomes were recorded.
 *
 * @module
 */

import * as v from "valibot";
import type { TraceDb } from "../../db.ts";
import { ConfigError } from "../../errors.ts";
import { describeIssues } from "../../issues.ts";
import {
  assessCoverage,
  type CoverageAssessment,
  type CoverageState,
} from "../coverage.ts";
import { decodeCursor, encodeCursor, filterDigest } from "./_cursor.ts";
import { filterWhere } from "./_filter_sql.ts";
import {
  timeRangeValid,
  TRACE_FILTER_ENTRIES,
  type TraceFilter,
} from "./filters.ts";
import type { TraceEvent } from "../model.ts";
import { readEventPage } from "./_read_rows.ts";
import { aboveFloor, kindStreams, SCAN_LIMIT, scanFloor } from "./_scan.ts";
import { requireObs } from "../schema.ts";
import { inTurn } from "./_turns.ts";

/** Page size when none is given. */
export const DEFAULT_PAGE_LIMIT = 250;
/** Largest page a query may ask for. */
export const MAX_PAGE_LIMIT = 1_000;

/** Whether the selected window was read whole, in part, or with undecodable rows. */
export const READ_COMPLETENESS = ["complete", "partial", "untrusted"] as const;
/** One of {@link READ_COMPLETENESS}. */
export type ReadCompleteness = typeof READ_COMPLETENESS[number];

/** Whether verified outcome evidence was present. */
export const OUTCOME_VERIFICATION = ["recorded", "unknown"] as const;
/** One of {@link OUTCOME_VERIFICATION}. */
export type OutcomeVerification = typeof OUTCOME_VERIFICATION[number];

/** A trace query: a filter plus page size and cursor. */
export interface TraceQuery extends TraceFilter {
  /** Events per page, 1 to 1,000 (default 250). */
  limit?: number | undefined;
  /** The previous page's `next_cursor`; valid only under the same filters. */
  cursor?: string | undefined;
}

const QueryShape = v.pipe(
  v.strictObject(
    {
      ...TRACE_FILTER_ENTRIES,
      limit: v.optional(v.pipe(
        v.number("must be a number"),
        v.integer("must be an integer"),
        v.minValue(1, "must be at least 1"),
        v.maxValue(MAX_PAGE_LIMIT, `must be at most ${MAX_PAGE_LIMIT}`),
      )),
      cursor: v.optional(
        v.pipe(v.string(), v.maxLength(512, "is too long to be a cursor")),
      ),
    },
    (issue) =>
      issue.expected === "never"
        ? "unknown filter; remove it"
        : "must be an object",
  ),
  v.check(timeRangeValid, "start_time must be before end_time"),
);
/** Schema of a query: a filter plus page size and cursor. */
export const TraceQuerySchema: v.GenericSchema<TraceQuery> = QueryShape;

// The interface restates what the schema accepts, for readers of the docs;
// this line stops compiling when the two drift apart.
type Same<A, B> = [A] extends [B] ? [B] extends [A] ? true : false : false;
type Holds<T extends true> = T;
type _TraceQueryMatches = Holds<
  Same<TraceQuery, v.InferInput<typeof QueryShape>>
>;

/** One page of events. */
export interface TraceEventPage {
  /** The page's events, newest first. */
  events: TraceEvent[];
  /** Pass back as `cursor` with the same filters for the next page; `null` at the end. */
  next_cursor: string | null;
  /** Whether more events match beyond this page. */
  has_more: boolean;
  /** Rows this bounded page window held. */
  rows_in_window: number;
  /**
   * For a filter no index narrows (statuses, tool, success, anonymous or
   * store alone): how many of the newest events (below the cursor) this
   * page examined at most; `null` when an index narrows the filter. Such a
   * page may hold fewer events than asked, or none, and still continue.
   */
  scan_limit: number | null;
  /** The page size asked for. */
  limit: number;
  /** `complete` when the whole selection was read, `partial` for one page of several, `untrusted` when a row could not be decoded. */
  read_completeness: ReadCompleteness;
  /** How well the page's task scopes were instrumented against their coverage profiles: `unknown`, `partial` or `complete`. */
  instrumentation_coverage: CoverageState;
  /** `recorded` when a verified outcome is on the page, else `unknown`. */
  outcome_verification: OutcomeVerification;
  /** Detail behind `instrumentation_coverage` for the roots on this page. */
  coverage: CoverageAssessment;
}

/** Validates a query; throws a ConfigError naming the first bad field. */
export function parseTraceQuery(input: unknown): TraceQuery {
  const parsed = v.safeParse(TraceQuerySchema, input);
  if (!parsed.success) {
    throw new ConfigError(
      `Invalid trace query: ${describeIssues(parsed.issues)}`,
    );
  }
  return parsed.output;
}

/** Reads one page of events matching `query`, newest first. */
export async function queryTraceEvents(
  db: TraceDb,
  query: TraceQuery,
): Promise<TraceEventPage> {
  const { limit: requested, cursor, ...filter } = parseTraceQuery(query);
  const limit = requested ?? DEFAULT_PAGE_LIMIT;
  await requireObs(db);
  const digest = filterDigest(filter);
  const after = cursor === undefined ? null : decodeCursor(cursor, digest);
  const floor = await scanFloor(db, filter, after);
  const where = aboveFloor(filterWhere(filter), floor);
  const decoded = await readEventPage(db, {
    where: where.sql,
    args: where.args,
    order: "desc",
    after,
    limit: limit + 1,
    streams: kindStreams(filter),
  });
  const events = decoded.slice(0, limit).map((d) => d.event);
  const last = events.at(-1);
  // Past the page, or past the examined stretch: continue below either.
  const next = decoded.length > limit && last
    ? { ts: Date.parse(last.ts), seq: last.seq }
    : floor;
  const coverage = await pageCoverage(db, events);
  return {
    events,
    next_cursor: next ? encodeCursor(next, digest) : null,
    has_more: next !== null,
    rows_in_window: events.length,
    scan_limit: floor ? SCAN_LIMIT : null,
    limit,
    read_completeness: decoded.slice(0, limit).some((d) => d.untrusted)
      ? "untrusted"
      : next || after
      ? "partial"
      : "complete",
    instrumentation_coverage: coverage.state,
    outcome_verification: events.some((e) => e.outcome?.verified === true)
      ? "recorded"
      : "unknown",
    coverage,
  };
}

async function pageCoverage(
  db: TraceDb,
  events: TraceEvent[],
): Promise<CoverageAssessment> {
  if (events.length === 0) {
    return {
      state: "unknown",
      roots: 0,
      declared_roots: 0,
      covered_roots: 0,
      gaps: [],
    };
  }
  return await inTurn(db, () =>
    assessCoverage(db, {
      sql: `SELECT DISTINCT application_id, root_trace_id FROM obs_events
          WHERE seq IN (SELECT value FROM json_each(?))`,
      args: [JSON.stringify(events.map((e) => e.seq))],
    }));
}
