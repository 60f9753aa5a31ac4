/**
 * The combined, bounded, metadata-only snapshot of every store: the newest
 * {@link SNAPSHOT_ROWS_PER_STORE} events a filter selects in each store,
 * merged newest first and cut at {@link SNAPSHOT_EVENTS}. It has no cursor:
 * it is a look across stores, not a way through history (page one store at
 * a time with `queryTraceEvents` for that), and says when a bound cut
 * something off.
 *
 * @module
 */

import type { TraceDb } from "../../db.ts";
import { assessCoverage, type CoverageAssessment } from "../coverage.ts";
import { type StoreName, STORES, type TraceEvent } from "../model.ts";
import { requireObs } from "../schema.ts";
import { filterWhere } from "./_filter_sql.ts";
import { readEventPage } from "./_read_rows.ts";
import { aboveFloor, SCAN_LIMIT, scanFloor } from "./_scan.ts";
import { parseTraceFilter, type TraceFilter } from "./filters.ts";
import type { OutcomeVerification, ReadCompleteness } from "./query.ts";
import { inTurn } from "./_turns.ts";
import { nextTurn } from "../_turn_line.ts";

/** Most events read from each store. */
export const SNAPSHOT_ROWS_PER_STORE = 500;
/** Most events the combined snapshot holds. */
export const SNAPSHOT_EVENTS = 1_000;

/** The combined snapshot of every store. */
export interface EventSnapshot {
  store: "all";
  /** Newest first, across stores. */
  events: TraceEvent[];
  /** Rows read from each store, and whether the store held more. */
  stores: Record<StoreName, { rows: number; truncated: boolean }>;
  /** True when the merge dropped events beyond {@link SNAPSHOT_EVENTS}. */
  truncated: boolean;
  /** For a filter no index narrows: how many of the newest events each store's read examined. */
  scan_limit: number | null;
  untrusted_rows: number;
  read_completeness: ReadCompleteness;
  instrumentation_coverage: CoverageAssessment["state"];
  outcome_verification: OutcomeVerification;
  coverage: CoverageAssessment;
}

/** Reads the combined snapshot of the events `scope` selects (its own `store` is ignored). */
export async function snapshotEvents(
  db: TraceDb,
  scope: TraceFilter = {},
): Promise<EventSnapshot> {
  const filter = parseTraceFilter({ ...scope, store: "all" });
  await requireObs(db);
  // Bounded as the trace store's read would be; the stretch is the same for every store.
  const floor = await scanFloor(db, { ...filter, store: "trace" }, null);
  const stores = {} as EventSnapshot["stores"];
  const merged: { event: TraceEvent; untrusted: boolean }[] = [];
  for (const store of STORES) {
    await nextTurn();
    const matched = filterWhere({ ...filter, store });
    const where = aboveFloor(matched, floor);
    const rows = await readEventPage(db, {
      where: where.sql,
      args: where.args,
      order: "desc",
      after: null,
      limit: SNAPSHOT_ROWS_PER_STORE + 1,
    });
    const kept = rows.slice(0, SNAPSHOT_ROWS_PER_STORE);
    stores[store] = {
      rows: kept.length,
      truncated: rows.length > SNAPSHOT_ROWS_PER_STORE,
    };
    merged.push(...kept);
  }
  merged.sort((a, b) =>
    Date.parse(b.event.ts) - Date.parse(a.event.ts) ||
    b.event.seq - a.event.seq
  );
  const kept = merged.slice(0, SNAPSHOT_EVENTS);
  const events = kept.map((row) => row.event);
  const untrusted = kept.filter((row) => row.untrusted).length;
  const truncated = merged.length > SNAPSHOT_EVENTS;
  const coverage = await inTurn(db, () =>
    assessCoverage(db, {
      sql: `SELECT DISTINCT application_id, root_trace_id FROM obs_events
          WHERE seq IN (SELECT value FROM json_each(?))`,
      args: [JSON.stringify(events.map((e) => e.seq))],
    }));
  return {
    store: "all",
    events,
    stores,
    truncated,
    scan_limit: floor ? SCAN_LIMIT : null,
    untrusted_rows: untrusted,
    read_completeness: untrusted > 0
      ? "untrusted"
      : truncated || floor !== null || STORES.some((s) => stores[s].truncated)
      ? "partial"
      : "complete",
    instrumentation_coverage: coverage.state,
    outcome_verification: events.some((e) => e.outcome?.verified === true)
      ? "recorded"
      : "unknown",
    coverage,
  };
}
