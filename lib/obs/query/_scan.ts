/**
 * A bound on reads that no index narrows. A filter on status, tool, success
 * or store alone has no index of its own: finding its newest matches walks
 * the time index, and a filter that matches nothing walks all of it (about
 * 0.3 s per million events, holding the event loop). Such reads examine at
 * most the newest {@link SCAN_LIMIT} events (below a cursor, within a time
 * range) and say so: one walk of the covering time index finds the oldest
 * of them (the floor), the read stays above it, and a cursor at the floor
 * continues below.
 *
 * @module
 */

import type { InValue } from "@libsql/client";
import type { TraceDb } from "../../db.ts";
import type { CursorKey } from "./_cursor.ts";
import type { SqlWhere } from "./_filter_sql.ts";
import type { TraceFilter } from "./filters.ts";
import { EVENT_STATUSES, type EventStatus } from "../model.ts";
import { readStatement } from "./_turns.ts";

/** Most events a read without an indexed scope examines. */
export const SCAN_LIMIT = 100_000;

/** Most kind and status streams one ordered read merges (see `_ordered.ts`). */
export const MAX_KIND_STREAMS = 48;

/** One range of the kind index: the events of one kind and one status. */
export interface KindStream {
  kind: string;
  status: EventStatus;
}

/** True when a scope other than kinds (with an opaque `q`) has an index that narrows `filter`. */
function scopedBeyondKinds(filter: TraceFilter, q?: string): boolean {
  return q !== undefined || filter.q !== undefined ||
    filter.application_id !== undefined ||
    typeof filter.user_id === "string" ||
    Boolean(filter.agent_ids?.length) || Boolean(filter.memory_ids?.length) ||
    filter.thread_id !== undefined || filter.root_trace_id !== undefined ||
    filter.run_id !== undefined || filter.turn_id !== undefined ||
    Boolean(filter.resources?.length);
}

/**
 * The streams of the kind index that read `filter` in time order: one per
 * kind and status (every status unless the filter names some), when kinds
 * are its only indexed scope and there are at most {@link MAX_KIND_STREAMS};
 * else `null` (another index serves it, or too many kinds to merge).
 */
export function kindStreams(
  filter: TraceFilter,
  q?: string,
): KindStream[] | null {
  const kinds = [...new Set(filter.kinds ?? [])];
  if (kinds.length === 0 || scopedBeyondKinds(filter, q)) return null;
  const statuses = filter.statuses?.length
    ? [...new Set(filter.statuses)]
    : EVENT_STATUSES;
  if (kinds.length * statuses.length > MAX_KIND_STREAMS) return null;
  return kinds.flatMap((kind) => statuses.map((status) => ({ kind, status })));
}

/**
 * True when a read of `filter` must be bounded by {@link SCAN_LIMIT}: it
 * keeps some events by a column no index orders (statuses without kinds,
 * tool, success, anonymous, store, or more kinds than can be merged).
 */
function needsScanBound(filter: TraceFilter, q?: string): boolean {
  if (scopedBeyondKinds(filter, q)) return false;
  const streams = kindStreams(filter, q);
  const unindexed = (Boolean(filter.statuses?.length) && streams === null) ||
    (Boolean(filter.kinds?.length) && streams === null) ||
    filter.tool !== undefined || filter.success !== undefined ||
    filter.user_id === null ||
    (filter.store !== undefined && filter.store !== "all");
  return unindexed;
}

/** The newest-first stretch of the time index a bounded read examines. */
function stretch(
  filter: TraceFilter,
  after: CursorKey | null,
): { sql: string; args: InValue[] } {
  const parts = ["1"];
  const args: InValue[] = [];
  if (filter.start_time) {
    parts.push("s.ts >= ?");
    args.push(Date.parse(filter.start_time));
  }
  if (filter.end_time) {
    parts.push("s.ts < ?");
    args.push(Date.parse(filter.end_time));
  }
  if (after) {
    parts.push("(s.ts, s.seq) < (?, ?)");
    args.push(after.ts, after.seq);
  }
  return {
    sql: `FROM obs_events s INDEXED BY obs_events_time WHERE ${
      parts.join(" AND ")
    } ORDER BY s.ts DESC, s.seq DESC`,
    args,
  };
}

/**
 * The oldest event of the newest {@link SCAN_LIMIT} below `after` (within
 * the filter's time range): a read of `filter` (and search `q`) that stays
 * at or above it examines at most that many events. `null` when the read
 * needs no bound ({@link needsScanBound}) or fewer events remain.
 */
export async function scanFloor(
  db: TraceDb,
  filter: TraceFilter,
  after: CursorKey | null,
  q?: string,
): Promise<CursorKey | null> {
  if (!needsScanBound(filter, q)) return null;
  const s = stretch(filter, after);
  const result = await readStatement(db, {
    sql: `SELECT s.ts, s.seq ${s.sql} LIMIT 1 OFFSET ${SCAN_LIMIT - 1}`,
    args: s.args,
  });
  const row = result.rows[0];
  return row ? { ts: Number(row.ts), seq: Number(row.seq) } : null;
}

/** `where` kept at or above `floor` (unchanged without one). */
export function aboveFloor(where: SqlWhere, floor: CursorKey | null): SqlWhere {
  if (!floor) return where;
  return {
    sql: `${where.sql} AND (e.ts, e.seq) >= (?, ?)`,
    args: [...where.args, floor.ts, floor.seq],
  };
}
