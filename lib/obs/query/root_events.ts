/**
 * The events of one task scope (application + root trace), oldest first,
 * for inspection and comparison: at most {@link MAX_ROOT_EVENTS} of them,
 * selected by the same filter as every other read (tenant, agent or memory,
 * thread, turn, run, time), each root read on its own so that one root
 * never takes another's budget. The answer states read completeness,
 * instrumentation coverage (of the whole root) and outcome verification
 * separately.
 *
 * @module
 */

import type { TraceDb } from "../../db.ts";
import { quoteValue } from "../../echo.ts";
import { ConfigError, ConflictError } from "../../errors.ts";
import { assessCoverage, type CoverageAssessment } from "../coverage.ts";
import type { TraceEvent } from "../model.ts";
import { requireObs } from "../schema.ts";
import { filterWhere } from "./_filter_sql.ts";
import { readEventPage } from "./_read_rows.ts";
import { parseTraceFilter, type TraceFilter } from "./filters.ts";
import type { OutcomeVerification, ReadCompleteness } from "./query.ts";
import { inTurn, readStatement } from "./_turns.ts";

/** Most events read of one root. */
export const MAX_ROOT_EVENTS = 1_000;

/** The events of one root. */
export interface RootRead {
  /** The root's application; `null` when no event of the root is in scope. */
  application_id: string | null;
  root_trace_id: string;
  /** Oldest first. */
  events: TraceEvent[];
  /** True when the root holds more events in scope than were read. */
  truncated: boolean;
  /** Rows whose stored metadata could not be decoded (listed with empty metadata). */
  untrusted_rows: number;
  read_completeness: ReadCompleteness;
  instrumentation_coverage: CoverageAssessment["state"];
  outcome_verification: OutcomeVerification;
  coverage: CoverageAssessment;
}

/** Options for {@link readRootEvents}. */
export interface RootReadOptions {
  /** Most events read (default and at most {@link MAX_ROOT_EVENTS}). */
  limit?: number;
}

/**
 * Reads the events `scope` selects of the root it names (`root_trace_id` is
 * required); throws a ConflictError when the root id exists in several
 * applications and `scope` names none.
 */
export async function readRootEvents(
  db: TraceDb,
  scope: TraceFilter,
  options: RootReadOptions = {},
): Promise<RootRead> {
  const filter = parseTraceFilter(scope);
  const root = filter.root_trace_id;
  if (root === undefined) {
    throw new ConfigError(
      "Cannot read a root without root_trace_id; name the root to read",
    );
  }
  const limit = Math.min(options.limit ?? MAX_ROOT_EVENTS, MAX_ROOT_EVENTS);
  await requireObs(db);
  const application = filter.application_id ??
    await soleApplication(db, filter);
  if (application === null) return emptyRead(root);
  const where = filterWhere({ ...filter, application_id: application });
  const rows = await readEventPage(db, {
    where: where.sql,
    args: where.args,
    order: "asc",
    after: null,
    limit: limit + 1,
  });
  const read = rows.slice(0, limit);
  const untrusted = read.filter((row) => row.untrusted).length;
  const events = read.map((row) => row.event);
  const coverage = await inTurn(db, () =>
    assessCoverage(db, {
      sql: "SELECT ? AS application_id, ? AS root_trace_id",
      args: [application, root],
    }));
  return {
    application_id: application,
    root_trace_id: root,
    events,
    truncated: rows.length > limit,
    untrusted_rows: untrusted,
    read_completeness: untrusted > 0
      ? "untrusted"
      : rows.length > limit
      ? "partial"
      : "complete",
    instrumentation_coverage: coverage.state,
    outcome_verification: events.some((e) => e.outcome?.verified === true)
      ? "recorded"
      : "unknown",
    coverage,
  };
}

/** The one application holding the root in scope, `null` for none; refuses two. */
async function soleApplication(
  db: TraceDb,
  filter: TraceFilter,
): Promise<string | null> {
  const where = filterWhere(filter);
  const result = await readStatement(db, {
    sql:
      `SELECT DISTINCT e.application_id FROM obs_events e WHERE ${where.sql} LIMIT 2`,
    args: where.args,
  });
  const apps = result.rows.map((row) => String(row.application_id)).sort();
  if (apps.length > 1) {
    throw new ConflictError(
      `Root ${quoteValue(filter.root_trace_id ?? "")} exists in applications ${
        quoteValue(apps[0]!)
      } and ${quoteValue(apps[1]!)}; add application_id to choose one`,
    );
  }
  return apps[0] ?? null;
}

function emptyRead(root: string): RootRead {
  return {
    application_id: null,
    root_trace_id: root,
    events: [],
    truncated: false,
    untrusted_rows: 0,
    read_completeness: "complete",
    instrumentation_coverage: "unknown",
    outcome_verification: "unknown",
    coverage: {
      state: "unknown",
      roots: 0,
      declared_roots: 0,
      covered_roots: 0,
      gaps: [],
    },
  };
}
