/**
 * Counts of the root groups a finder page lists: for each (application,
 * root), its matching events (up to {@link MAX_GROUP_COUNT}), errors, time
 * span, most frequent kinds, threads and actors, and the root's own event.
 * One bounded statement per group, through the root index, in one batch
 * (named: with a time range, SQLite would rather walk the tenant's events in
 * that range, every one of them for each group).
 *
 * @module
 */

import type { TraceDb } from "../../db.ts";
import type { EventStatus } from "../model.ts";
import type { SqlWhere } from "./_filter_sql.ts";
import { readStatement } from "./_turns.ts";

/** Matching events counted per group before the count stops. */
export const MAX_GROUP_COUNT = 5_000;
const KINDS_SHOWN = 5;
const NAMES_SHOWN = 3;

/** What a finder group counts. */
export interface RootTotals {
  /** Matching events of the group (at most {@link MAX_GROUP_COUNT}). */
  events: number;
  /** True when the count stopped at {@link MAX_GROUP_COUNT}. */
  events_capped: boolean;
  errors: number;
  ok: number;
  /** `error` when an event erred, else `ok` when one is ok, else `unset`. */
  status: EventStatus;
  verified_outcomes: number;
  first_ts: string;
  last_ts: string;
  /** The most frequent kinds, most frequent first. */
  kinds: { kind: string; events: number }[];
  /** Up to three threads, and how many there are. */
  threads: string[];
  thread_count: number;
  /** Up to three agent-or-memory pairs. */
  actors: { agent_id: string | null; memory_id: string | null }[];
  /**
   * The root's own event, whatever the filter matched: the event whose id is
   * the root id, else the root's first event without a parent.
   */
  root_event:
    | { event_id: string; kind: string; status: EventStatus }
    | null;
}

/** Totals of each `(application_id, root_trace_id)` group, in order. */
export async function groupTotals(
  db: TraceDb,
  where: SqlWhere,
  tenant: SqlWhere,
  groups: readonly { application_id: string; root_trace_id: string }[],
): Promise<RootTotals[]> {
  if (groups.length === 0) return [];
  // One turn per group: a page's groups together can take a while.
  const results = await Promise.all(
    groups.map((group) =>
      readStatement(db, {
        sql: totalsSql(where.sql, tenant.sql),
        args: [
          group.root_trace_id,
          group.application_id,
          ...where.args,
          group.root_trace_id,
          group.application_id,
          ...tenant.args,
        ],
      })
    ),
  );
  return results.map((result) => decode(result.rows[0] ?? {}));
}

function totalsSql(where: string, tenant: string): string {
  return `WITH r AS MATERIALIZED (
    SELECT e.kind, e.status, e.ts, e.thread_id, e.agent_id, e.memory_id,
      e.outcome_verified FROM obs_events e INDEXED BY obs_events_root
    WHERE e.root_trace_id = ? AND e.application_id = ? AND ${where}
    LIMIT ${MAX_GROUP_COUNT + 1})
  SELECT (SELECT COUNT(*) FROM r) AS events,
    (SELECT TOTAL(status = 'error') FROM r) AS errors,
    (SELECT TOTAL(status = 'ok') FROM r) AS ok,
    (SELECT TOTAL(outcome_verified = 1) FROM r) AS verified,
    (SELECT MIN(ts) FROM r) AS first_ts, (SELECT MAX(ts) FROM r) AS last_ts,
    (SELECT json_group_array(json_array(kind, n)) FROM (
      SELECT kind, COUNT(*) AS n FROM r GROUP BY kind
      ORDER BY n DESC, kind LIMIT ${KINDS_SHOWN})) AS kinds,
    (SELECT COUNT(DISTINCT thread_id) FROM r) AS thread_count,
    (SELECT json_group_array(thread_id) FROM (
      SELECT DISTINCT thread_id FROM r WHERE thread_id IS NOT NULL
      ORDER BY thread_id LIMIT ${NAMES_SHOWN})) AS threads,
    (SELECT json_group_array(json_array(agent_id, memory_id)) FROM (
      SELECT DISTINCT agent_id, memory_id FROM r
      ORDER BY agent_id, memory_id LIMIT ${NAMES_SHOWN})) AS actors,
    (SELECT json_array(x.event_id, x.kind, x.status) FROM obs_events x
      WHERE x.root_trace_id = ? AND x.application_id = ? AND ${tenant}
        AND (x.event_id = x.root_trace_id OR x.parent_event_id IS NULL)
      ORDER BY x.event_id = x.root_trace_id DESC, x.ts, x.seq LIMIT 1)
      AS root_event`;
}

type Row = Record<string, unknown>;

function decode(row: Row): RootTotals {
  const n = (key: string) => Number(row[key] ?? 0);
  const events = n("events");
  const errors = n("errors");
  const ok = n("ok");
  const root = row.root_event === null || row.root_event === undefined
    ? null
    : JSON.parse(String(row.root_event)) as [string, string, EventStatus];
  return {
    events: Math.min(events, MAX_GROUP_COUNT),
    events_capped: events > MAX_GROUP_COUNT,
    errors,
    ok,
    status: errors > 0 ? "error" : ok > 0 ? "ok" : "unset",
    verified_outcomes: n("verified"),
    first_ts: new Date(n("first_ts")).toISOString(),
    last_ts: new Date(n("last_ts")).toISOString(),
    kinds: (JSON.parse(String(row.kinds ?? "[]")) as [string, number][])
      .map(([kind, count]) => ({ kind, events: Number(count) })),
    thread_count: n("thread_count"),
    threads: JSON.parse(String(row.threads ?? "[]")) as string[],
    actors: (JSON.parse(String(row.actors ?? "[]")) as [
      string | null,
      string | null,
    ][]).map(([agent_id, memory_id]) => ({ agent_id, memory_id })),
    root_event: root
      ? { event_id: root[0], kind: root[1], status: root[2] }
      : null,
  };
}
