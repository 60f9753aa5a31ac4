/**
 * Which events a summary reads, chosen so that no query of it scans much
 * more than {@link WindowOptions.limit} rows:
 *
 * - a filter with an indexed scope (tenant, user, agent or memory, thread,
 *   root, run, turn, exact id, resource) reads the newest `limit` events it
 *   selects, through that scope's index;
 * - any other filter (kinds, statuses, tool, success, store or a time range
 *   alone) has no index that narrows it, so it reads the newest `limit`
 *   events of the index (within its time range) through the time index and
 *   keeps those it selects.
 *
 * Either way the window is a `(ts, seq)` cutoff found by one index walk, so
 * the aggregates stay in SQL and no row is copied out to find it.
 *
 * @module
 */

import type { TraceDb } from "../../db.ts";
import type { SqlWhere } from "./_filter_sql.ts";
import type { TraceFilter } from "./filters.ts";
import { readStatement } from "./_turns.ts";

/** What a summary window counted up to its limit. */
export const WINDOW_BASES = ["selected", "index"] as const;
/** One of {@link WINDOW_BASES}: the events the filter selects, or the events of the index. */
export type WindowBasis = typeof WINDOW_BASES[number];

/** The rows a summary aggregates. */
export interface WindowSql {
  /** `FROM …` clause over `obs_events e`. */
  from: string;
  /** The filter, narrowed to the window. */
  where: SqlWhere;
  basis: WindowBasis;
  /** True when older events were left out. */
  truncated: boolean;
}

/** Bounds of a window. */
export interface WindowOptions {
  limit: number;
}

/** Finds the window of `filter` (whose SQL form is `where`). */
export async function summaryWindow(
  db: TraceDb,
  filter: TraceFilter,
  where: SqlWhere,
  options: WindowOptions,
): Promise<WindowSql> {
  const scoped = hasScope(filter);
  const from = scoped
    ? "FROM obs_events e"
    : "FROM obs_events e INDEXED BY obs_events_time";
  const counted = scoped ? where : timeRange(filter);
  const probe = await readStatement(db, {
    sql: `SELECT e.ts, e.seq ${from} WHERE ${counted.sql}
          ORDER BY e.ts DESC, e.seq DESC LIMIT 1 OFFSET ${options.limit}`,
    args: counted.args,
  });
  const basis = scoped ? "selected" : "index";
  const cutoff = probe.rows[0];
  if (!cutoff) return { from, where, basis, truncated: false };
  return {
    from,
    where: {
      sql: `${where.sql} AND (e.ts, e.seq) > (?, ?)`,
      args: [...where.args, Number(cutoff.ts), Number(cutoff.seq)],
    },
    basis,
    truncated: true,
  };
}

function hasScope(filter: TraceFilter): boolean {
  return filter.application_id !== undefined ||
    typeof filter.user_id === "string" ||
    Boolean(filter.agent_ids?.length) || Boolean(filter.memory_ids?.length) ||
    filter.thread_id !== undefined || filter.root_trace_id !== undefined ||
    filter.run_id !== undefined || filter.turn_id !== undefined ||
    filter.q !== undefined || Boolean(filter.resources?.length);
}

function timeRange(filter: TraceFilter): SqlWhere {
  const parts = ["1"];
  const args: number[] = [];
  if (filter.start_time) {
    parts.push("e.ts >= ?");
    args.push(Date.parse(filter.start_time));
  }
  if (filter.end_time) {
    parts.push("e.ts < ?");
    args.push(Date.parse(filter.end_time));
  }
  return { sql: parts.join(" AND "), args };
}
