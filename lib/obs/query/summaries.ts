/**
 * Aggregates over a filter, computed entirely in SQL from index columns:
 * neither the `meta` payload column nor any preview is read. Counts are
 * recorded-event counts, not claims about what happened unrecorded.
 *
 * Bounded work: a summary reads at most {@link MAX_SUMMARY_EVENTS} events,
 * the newest (by event time) the filter selects, or, for a filter without
 * an indexed scope, the newest of the index (see `_summary_window.ts`), and
 * says so (`window`, `read_completeness: "partial"`) when older events were
 * left out. The local libSQL client runs each query on the calling thread,
 * so an unbounded summary of a million events would hold every other
 * request for seconds; the aggregates run one query at a time, each in its
 * turn (`_turns.ts`). The window is small enough that the longest of them
 * (the groups) stays near 20 ms: at 100,000 events it took 100 to 200 ms,
 * and twenty clients asking at once kept every other request waiting for
 * seconds.
 *
 * @module
 */

import type { InStatement, ResultSet } from "@libsql/client";
import type { TraceDb } from "../../db.ts";
import {
  assessCoverage,
  type CoverageAssessment,
  type CoverageState,
} from "../coverage.ts";
import { filterWhere } from "./_filter_sql.ts";
import { summaryWindow } from "./_summary_window.ts";
import { parseTraceFilter, type TraceFilter } from "./filters.ts";
import {
  EVENT_STATUSES,
  type EventStatus,
  type StoreName,
  STORES,
} from "../model.ts";
import type { OutcomeVerification, ReadCompleteness } from "./query.ts";
import { requireObs } from "../schema.ts";
import { inTurn, readStatement } from "./_turns.ts";
import { nextTurn } from "../_turn_line.ts";

/** Most agent/memory/thread groups a summary lists. */
export const MAX_SUMMARY_GROUPS = 1_000;
/** Most kinds a summary lists. */
export const MAX_SUMMARY_KINDS = 100;
/** Most events one summary reads: the newest the filter selects. */
export const MAX_SUMMARY_EVENTS = 20_000;

/** Events of one agent-or-memory and thread. */
export interface SummaryGroup {
  /** The agent, when the events name one. */
  agent_id: string | null;
  /** The memory store, when the events name one. */
  memory_id: string | null;
  /** The conversation. */
  thread_id: string | null;
  /** Events of the group. */
  events: number;
  /** Those with status `error`. */
  errors: number;
  /** The oldest event time, ISO 8601. */
  first_ts: string;
  /** The newest event time, ISO 8601. */
  last_ts: string;
}

/** Which events a summary read. */
export interface SummaryWindow {
  /** Most events a summary reads ({@link MAX_SUMMARY_EVENTS}). */
  limit: number;
  /**
   * `selected`: the newest `limit` events the filter selects (filters with a
   * tenant, user, agent, memory, thread, root, run, turn, id or resource);
   * `index`: the newest `limit` events of the index in the time range, of
   * which the filter keeps some (filters without such a scope).
   */
  basis: "selected" | "index";
  /** True when older events were not read: the summary is partial. */
  truncated: boolean;
}

/** Aggregate view of the events a filter selects (the newest {@link MAX_SUMMARY_EVENTS} of them). */
export interface TraceSummary {
  /** Which events were read. */
  window: SummaryWindow;
  /** Events summarized. */
  events: number;
  /** Distinct task scopes among them. */
  roots: number;
  /** The oldest event time, ISO 8601; `null` without events. */
  first_ts: string | null;
  /** The newest event time, ISO 8601; `null` without events. */
  last_ts: string | null;
  /** Events with status `error`. */
  errors: number;
  /** Events by their `success` field. */
  success: { true: number; false: number; unrecorded: number };
  /** Events per store. */
  by_store: Record<StoreName, number>;
  /** Events per status. */
  by_status: Record<EventStatus, number>;
  /** Events per kind, most frequent first (at most {@link MAX_SUMMARY_KINDS}). */
  by_kind: { kind: string; events: number }[];
  /** True when more kinds exist than `by_kind` lists. */
  kinds_truncated: boolean;
  /** Events with a selection decision, their candidates, and how many were kept. */
  selections: { events: number; candidates: number; selected: number };
  /** Events with an outcome, and how many of those the host verified. */
  outcomes: { recorded: number; verified: number };
  /** Events with a stored preview. */
  previews: number;
  /** Events per agent or memory and thread (at most {@link MAX_SUMMARY_GROUPS}). */
  groups: SummaryGroup[];
  /** True when more groups exist than `groups` lists. */
  groups_truncated: boolean;
  /** `partial` when older events, kinds or groups were left out, else `complete`. */
  read_completeness: ReadCompleteness;
  /** How well the summarized task scopes were instrumented. */
  instrumentation_coverage: CoverageState;
  /** `recorded` when a verified outcome is among the events, else `unknown`. */
  outcome_verification: OutcomeVerification;
  /** Detail behind `instrumentation_coverage`. */
  coverage: CoverageAssessment;
}

const iso = (value: unknown) =>
  value === null ? null : new Date(Number(value)).toISOString();

/** Options for {@link summarizeTraceEvents}. */
export interface SummaryOptions {
  /** Most events read (default {@link MAX_SUMMARY_EVENTS}). */
  maxEvents?: number;
}

/** Summarizes the newest events `scope` selects, at most {@link MAX_SUMMARY_EVENTS} of them. */
export async function summarizeTraceEvents(
  db: TraceDb,
  scope: TraceFilter = {},
  options: SummaryOptions = {},
): Promise<TraceSummary> {
  const filter = parseTraceFilter(scope);
  await requireObs(db);
  const limit = options.maxEvents ?? MAX_SUMMARY_EVENTS;
  const window = await summaryWindow(db, filter, filterWhere(filter), {
    limit,
  });
  const from = `${window.from} WHERE ${window.where.sql}`;
  const read = (sql: string) => step(db, { sql, args: window.where.args });
  const totals = await read(`SELECT COUNT(*) AS events,
      COUNT(DISTINCT e.application_id || char(0) || e.root_trace_id) AS roots,
      MIN(e.ts) AS first_ts, MAX(e.ts) AS last_ts,
      TOTAL(e.status = 'error') AS errors,
      TOTAL(e.success = 1) AS success_true, TOTAL(e.success = 0) AS success_false,
      TOTAL(e.candidate_count > 0) AS selections, TOTAL(e.candidate_count) AS candidates,
      TOTAL(e.selected_count) AS selected,
      TOTAL(e.outcome_verified IS NOT NULL) AS outcomes,
      TOTAL(e.outcome_verified = 1) AS verified
    ${from}`);
  const stores = await read(
    `SELECT e.store AS key, COUNT(*) AS n ${from} GROUP BY e.store`,
  );
  const statuses = await read(
    `SELECT e.status AS key, COUNT(*) AS n ${from} GROUP BY e.status`,
  );
  const kinds = await read(`SELECT e.kind AS key, COUNT(*) AS n ${from}
    GROUP BY e.kind ORDER BY n DESC, e.kind LIMIT ${MAX_SUMMARY_KINDS + 1}`);
  const groups = await read(`SELECT e.agent_id, e.memory_id, e.thread_id,
      COUNT(*) AS n, TOTAL(e.status = 'error') AS errors,
      MIN(e.ts) AS first_ts, MAX(e.ts) AS last_ts
    ${from} GROUP BY e.agent_id, e.memory_id, e.thread_id
    ORDER BY last_ts DESC LIMIT ${MAX_SUMMARY_GROUPS + 1}`);
  // Joins on the preview key only: its content column is never touched.
  const previews = await read(
    `SELECT COUNT(*) AS n FROM obs_previews p WHERE p.seq IN (SELECT e.seq ${from})`,
  );
  await nextTurn();
  const coverage = await inTurn(db, () =>
    assessCoverage(db, {
      sql: `SELECT DISTINCT e.application_id, e.root_trace_id ${from}`,
      args: window.where.args,
    }));
  return shape({
    window: {
      limit,
      basis: window.basis,
      truncated: window.truncated,
    },
    totals: totals.rows[0]!,
    stores: stores.rows,
    statuses: statuses.rows,
    kinds: kinds.rows,
    groups: groups.rows,
    previews: Number(previews.rows[0]?.n ?? 0),
    coverage,
  });
}

/** One query of a summary, after a turn of the event loop. */
async function step(db: TraceDb, statement: InStatement): Promise<ResultSet> {
  await nextTurn();
  return await readStatement(db, statement);
}

type Row = Record<string, unknown>;

interface SummaryRows {
  window: SummaryWindow;
  totals: Row;
  stores: readonly Row[];
  statuses: readonly Row[];
  kinds: readonly Row[];
  groups: readonly Row[];
  previews: number;
  coverage: CoverageAssessment;
}

function shape(rows: SummaryRows): TraceSummary {
  const t = rows.totals;
  const count = (key: string) => Number(t[key] ?? 0);
  const { groups, kinds, coverage } = rows;
  return {
    window: rows.window,
    events: count("events"),
    roots: count("roots"),
    first_ts: iso(t.first_ts),
    last_ts: iso(t.last_ts),
    errors: count("errors"),
    success: {
      true: count("success_true"),
      false: count("success_false"),
      unrecorded: count("events") - count("success_true") -
        count("success_false"),
    },
    by_store: tally(STORES, rows.stores),
    by_status: tally(EVENT_STATUSES, rows.statuses),
    by_kind: kinds.slice(0, MAX_SUMMARY_KINDS).map((row) => ({
      kind: String(row.key),
      events: Number(row.n),
    })),
    kinds_truncated: kinds.length > MAX_SUMMARY_KINDS,
    selections: {
      events: count("selections"),
      candidates: count("candidates"),
      selected: count("selected"),
    },
    outcomes: { recorded: count("outcomes"), verified: count("verified") },
    previews: rows.previews,
    groups: groups.slice(0, MAX_SUMMARY_GROUPS).map((row) => ({
      agent_id: row.agent_id === null ? null : String(row.agent_id),
      memory_id: row.memory_id === null ? null : String(row.memory_id),
      thread_id: row.thread_id === null ? null : String(row.thread_id),
      events: Number(row.n),
      errors: Number(row.errors),
      first_ts: iso(row.first_ts)!,
      last_ts: iso(row.last_ts)!,
    })),
    groups_truncated: groups.length > MAX_SUMMARY_GROUPS,
    read_completeness:
      rows.window.truncated || groups.length > MAX_SUMMARY_GROUPS ||
        kinds.length > MAX_SUMMARY_KINDS
        ? "partial"
        : "complete",
    instrumentation_coverage: coverage.state,
    outcome_verification: count("verified") > 0 ? "recorded" : "unknown",
    coverage,
  };
}

function tally<const K extends string>(
  keys: readonly K[],
  rows: readonly Record<string, unknown>[],
): Record<K, number> {
  const result = Object.fromEntries(keys.map((key) => [key, 0])) as Record<
    K,
    number
  >;
  for (const row of rows) {
    const key = String(row.key) as K;
    if (key in result) result[key] = Number(row.n);
  }
  return result;
}
