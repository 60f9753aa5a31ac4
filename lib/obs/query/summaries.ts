/**
 * Aggregates over a filter, computed entirely in SQL from index columns:
 * neither the `meta` payload column nor any preview is read. Counts are
 * recorded-event counts, not claims about what happened unrecorded.
 *
 * @module
 */

import type { TraceDb } from "../../db.ts";
import {
  assessCoverage,
  type CoverageAssessment,
  type CoverageState,
} from "../coverage.ts";
import { filterWhere } from "./_filter_sql.ts";
import { parseTraceFilter, type TraceFilter } from "./filters.ts";
import {
  EVENT_STATUSES,
  type EventStatus,
  type StoreName,
  STORES,
} from "../model.ts";
import type { OutcomeVerification, ReadCompleteness } from "./query.ts";
import { requireObs } from "../schema.ts";

/** Most agent/memory/thread groups a summary lists. */
export const MAX_SUMMARY_GROUPS = 1_000;
/** Most kinds a summary lists. */
export const MAX_SUMMARY_KINDS = 100;

/** Events of one agent-or-memory and thread. */
export interface SummaryGroup {
  agent_id: string | null;
  memory_id: string | null;
  thread_id: string | null;
  events: number;
  errors: number;
  first_ts: string;
  last_ts: string;
}

/** Aggregate view of the events a filter selects. */
export interface TraceSummary {
  events: number;
  roots: number;
  first_ts: string | null;
  last_ts: string | null;
  errors: number;
  success: { true: number; false: number; unrecorded: number };
  by_store: Record<StoreName, number>;
  by_status: Record<EventStatus, number>;
  by_kind: { kind: string; events: number }[];
  kinds_truncated: boolean;
  selections: { events: number; candidates: number; selected: number };
  outcomes: { recorded: number; verified: number };
  previews: number;
  groups: SummaryGroup[];
  groups_truncated: boolean;
  read_completeness: ReadCompleteness;
  instrumentation_coverage: CoverageState;
  outcome_verification: OutcomeVerification;
  coverage: CoverageAssessment;
}

const iso = (value: unknown) =>
  value === null ? null : new Date(Number(value)).toISOString();

/** Summarizes the events `scope` selects. */
export async function summarizeTraceEvents(
  db: TraceDb,
  scope: TraceFilter = {},
): Promise<TraceSummary> {
  const filter = parseTraceFilter(scope);
  await requireObs(db);
  const where = filterWhere(filter);
  const from = `FROM obs_events e WHERE ${where.sql}`;
  const [totals, stores, statuses, kinds, groups, previews] = await db.client
    .batch([
      {
        sql: `SELECT COUNT(*) AS events,
              COUNT(DISTINCT e.application_id || char(0) || e.root_trace_id) AS roots,
              MIN(e.ts) AS first_ts, MAX(e.ts) AS last_ts,
              TOTAL(e.status = 'error') AS errors,
              TOTAL(e.success = 1) AS success_true, TOTAL(e.success = 0) AS success_false,
              TOTAL(e.candidate_count > 0) AS selections, TOTAL(e.candidate_count) AS candidates,
              TOTAL(e.selected_count) AS selected,
              TOTAL(e.outcome_verified IS NOT NULL) AS outcomes,
              TOTAL(e.outcome_verified = 1) AS verified
            ${from}`,
        args: where.args,
      },
      {
        sql: `SELECT e.store AS key, COUNT(*) AS n ${from} GROUP BY e.store`,
        args: where.args,
      },
      {
        sql: `SELECT e.status AS key, COUNT(*) AS n ${from} GROUP BY e.status`,
        args: where.args,
      },
      {
        sql: `SELECT e.kind AS key, COUNT(*) AS n ${from} GROUP BY e.kind
            ORDER BY n DESC, e.kind LIMIT ${MAX_SUMMARY_KINDS + 1}`,
        args: where.args,
      },
      {
        sql: `SELECT e.agent_id, e.memory_id, e.thread_id, COUNT(*) AS n,
              TOTAL(e.status = 'error') AS errors, MIN(e.ts) AS first_ts, MAX(e.ts) AS last_ts
            ${from} GROUP BY e.agent_id, e.memory_id, e.thread_id
            ORDER BY last_ts DESC LIMIT ${MAX_SUMMARY_GROUPS + 1}`,
        args: where.args,
      },
      {
        // Joins on the preview key only: its content column is never touched.
        sql:
          `SELECT COUNT(*) AS n FROM obs_previews p WHERE p.seq IN (SELECT e.seq ${from})`,
        args: where.args,
      },
    ], "read");
  const t = totals!.rows[0]!;
  const count = (key: string) => Number(t[key] ?? 0);
  const coverage = await assessCoverage(db, {
    sql: `SELECT DISTINCT e.application_id, e.root_trace_id ${from}`,
    args: where.args,
  });
  const groupRows = groups!.rows;
  const kindRows = kinds!.rows;
  return {
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
    by_store: tally(STORES, stores!.rows),
    by_status: tally(EVENT_STATUSES, statuses!.rows),
    by_kind: kindRows.slice(0, MAX_SUMMARY_KINDS).map((row) => ({
      kind: String(row.key),
      events: Number(row.n),
    })),
    kinds_truncated: kindRows.length > MAX_SUMMARY_KINDS,
    selections: {
      events: count("selections"),
      candidates: count("candidates"),
      selected: count("selected"),
    },
    outcomes: { recorded: count("outcomes"), verified: count("verified") },
    previews: Number(previews!.rows[0]?.n ?? 0),
    groups: groupRows.slice(0, MAX_SUMMARY_GROUPS).map((row) => ({
      agent_id: row.agent_id === null ? null : String(row.agent_id),
      memory_id: row.memory_id === null ? null : String(row.memory_id),
      thread_id: row.thread_id === null ? null : String(row.thread_id),
      events: Number(row.n),
      errors: Number(row.errors),
      first_ts: iso(row.first_ts)!,
      last_ts: iso(row.last_ts)!,
    })),
    groups_truncated: groupRows.length > MAX_SUMMARY_GROUPS,
    read_completeness: groupRows.length > MAX_SUMMARY_GROUPS ||
        kindRows.length > MAX_SUMMARY_KINDS
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
