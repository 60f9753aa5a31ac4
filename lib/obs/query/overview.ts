/**
 * The finder's agent/thread overview: the newest events a selection holds,
 * counted in SQL per agent-or-memory and thread, newest group first. Both
 * sides are bounded: the count reads at most {@link OVERVIEW_EVENTS} events
 * and lists at most {@link MAX_OVERVIEW_GROUPS} groups, and says when
 * either bound cut something off. Its scope is not the finder's page: the
 * page reads its own window, so the two counts differ by design.
 *
 * @module
 */

import type { TraceDb } from "../../db.ts";
import { requireObs } from "../schema.ts";
import { findWhere, type IdField } from "./_find_sql.ts";
import { aboveFloor, kindStreams, SCAN_LIMIT, scanFloor } from "./_scan.ts";
import { orderedRows } from "./_ordered.ts";
import { parseTraceFilter, type TraceFilter } from "./filters.ts";
import { readStatement } from "./_turns.ts";

/** Most groups the overview lists. */
export const MAX_OVERVIEW_GROUPS = 1_000;
/** Most events (the newest) the overview counts. */
export const OVERVIEW_EVENTS = 10_000;

/** Events of one agent-or-memory in one thread. */
export interface OverviewGroup {
  agent_id: string | null;
  memory_id: string | null;
  thread_id: string | null;
  events: number;
  errors: number;
  first_ts: string;
  last_ts: string;
}

/** The overview of a selection. */
export interface TraceOverview {
  groups: OverviewGroup[];
  /** True when more than {@link MAX_OVERVIEW_GROUPS} groups were found. */
  groups_truncated: boolean;
  /** Events counted (at most {@link OVERVIEW_EVENTS}). */
  events_counted: number;
  /** True when older events were not counted. */
  events_truncated: boolean;
  /** For a filter no index narrows: how many of the newest events were examined. */
  scan_limit: number | null;
}

/** Options for {@link traceOverview}. */
export interface OverviewOptions {
  /** An opaque id, matched as the kinds of id in `fields` (see `matchOpaqueId`). */
  q?: string;
  fields?: readonly IdField[];
}

/** Counts the newest events of `filter` per agent-or-memory and thread. */
export async function traceOverview(
  db: TraceDb,
  filter: TraceFilter,
  options: OverviewOptions = {},
): Promise<TraceOverview> {
  const parsed = parseTraceFilter(filter);
  await requireObs(db);
  const matched = findWhere(parsed, options.q, options.fields ?? []);
  const floor = await scanFloor(db, parsed, null, options.q);
  const where = aboveFloor(matched, floor);
  const newest = orderedRows({
    columns: "e.agent_id, e.memory_id, e.thread_id, e.status, e.ts, e.seq",
    where,
    order: "desc",
    after: null,
    limit: OVERVIEW_EVENTS + 1,
    streams: kindStreams(parsed, options.q),
  });
  const result = await readStatement(db, {
    sql: `WITH w AS MATERIALIZED (${newest.sql})
          SELECT (SELECT COUNT(*) FROM w) AS counted,
            (SELECT json_group_array(json_array(agent_id, memory_id, thread_id,
                n, errors, first_ts, last_ts)) FROM (
              SELECT agent_id, memory_id, thread_id, COUNT(*) AS n,
                TOTAL(status = 'error') AS errors, MIN(ts) AS first_ts,
                MAX(ts) AS last_ts
              FROM (SELECT * FROM w ORDER BY ts DESC, seq DESC
                LIMIT ${OVERVIEW_EVENTS})
              GROUP BY agent_id, memory_id, thread_id
              ORDER BY last_ts DESC, agent_id, memory_id, thread_id
              LIMIT ${MAX_OVERVIEW_GROUPS + 1})) AS groups`,
    args: newest.args,
  });
  const row: Record<string, unknown> = result.rows[0] ?? {};
  const counted = Number(row.counted ?? 0);
  const groups = JSON.parse(String(row.groups ?? "[]")) as unknown[][];
  return {
    groups: groups.slice(0, MAX_OVERVIEW_GROUPS).map(decodeGroup),
    groups_truncated: groups.length > MAX_OVERVIEW_GROUPS,
    events_counted: Math.min(counted, OVERVIEW_EVENTS),
    events_truncated: counted > OVERVIEW_EVENTS,
    scan_limit: floor ? SCAN_LIMIT : null,
  };
}

const text = (value: unknown): string | null =>
  value === null ? null : String(value);

function decodeGroup(t: unknown[]): OverviewGroup {
  return {
    agent_id: text(t[0]),
    memory_id: text(t[1]),
    thread_id: text(t[2]),
    events: Number(t[3]),
    errors: Number(t[4]),
    first_ts: new Date(Number(t[5])).toISOString(),
    last_ts: new Date(Number(t[6])).toISOString(),
  };
}
