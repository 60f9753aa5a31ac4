/**
 * The checks health runs, each reading only counts, names and small columns
 * (never a payload or a preview): process counters, index readiness, row
 * counts, broken links, truncation and instrumentation versions.
 *
 * @module
 */

import type { TraceDb } from "../../db.ts";
import {
  COUNTER_NAMES,
  type CounterName,
  counterSnapshot,
} from "../counters.ts";
import { type StoreName, STORES } from "../model.ts";
import { expectedSchemaObjects } from "../schema_objects.ts";
import { retainedOutSql, type RetentionMarks } from "./_state.ts";

/** Counters of the writing process, or `unknown` when this reader has none. */
export interface CounterReport {
  state: "recorded" | "unknown";
  scope: "this_process" | null;
  since: string | null;
  values: Record<CounterName, number | null>;
}

/** Whether every index and trigger the schema declares exists. */
export interface IndexReadiness {
  ready: boolean;
  expected: number;
  missing: string[];
}

/** Rows of each observability table, and index rows by store. */
export interface TableCounts {
  envelopes: number;
  events: number;
  resources: number;
  previews: number;
  coverage_profiles: number;
  expiry_grants: number;
  by_store: Record<StoreName, number>;
}

/** Links the index should hold but does not. */
export interface LinkCounts {
  missing_parent_links: number;
  unindexed_envelopes: number;
  unregistered_coverage_profiles: number;
}

/** How many previews were stored, and how many of them truncated. */
export interface PreviewTruncation {
  previews: number;
  truncated_previews: number;
}

/** Instrumentation names and versions among the latest events. */
export interface InstrumentationVersions {
  /** Latest events sampled for versions. */
  sampled_events: number;
  versions: { name: string | null; version: string | null; events: number }[];
}

/** The process counters when this process is the writer, else `unknown` for each. */
export function counterReport(processCounters: boolean): CounterReport {
  if (!processCounters) {
    const values = Object.fromEntries(
      COUNTER_NAMES.map((n) => [n, null]),
    ) as Record<
      CounterName,
      number | null
    >;
    return { state: "unknown", scope: null, since: null, values };
  }
  const snapshot = counterSnapshot();
  return {
    state: "recorded",
    scope: "this_process",
    since: snapshot.since,
    values: snapshot.counts,
  };
}

/** Compares the indexes and triggers present with those the schema declares. */
export async function indexReadiness(db: TraceDb): Promise<IndexReadiness> {
  const expected = expectedSchemaObjects();
  const result = await db.client.execute(
    "SELECT name FROM sqlite_master WHERE type IN ('index', 'trigger') AND name LIKE 'obs_%'",
  );
  const present = new Set(result.rows.map((row) => String(row.name)));
  const missing = expected.filter((name) => !present.has(name));
  return { ready: missing.length === 0, expected: expected.length, missing };
}

/** Counts the rows of every observability table. */
export async function tableCounts(
  db: TraceDb,
): Promise<TableCounts> {
  const tables = [
    "obs_envelopes",
    "obs_events",
    "obs_resources",
    "obs_previews",
    "obs_coverage_profiles",
    "obs_expiry_grants",
  ];
  const results = await db.client.batch([
    ...tables.map((table) => `SELECT COUNT(*) AS n FROM ${table}`),
    "SELECT store, COUNT(*) AS n FROM obs_events GROUP BY store",
  ], "read");
  const n = (index: number) => Number(results[index]?.rows[0]?.n ?? 0);
  const byStore = Object.fromEntries(
    STORES.map((store) => [store, 0]),
  ) as Record<StoreName, number>;
  for (const row of results[tables.length]?.rows ?? []) {
    const store = String(row.store) as StoreName;
    if (store in byStore) byStore[store] = Number(row.n);
  }
  return {
    envelopes: n(0),
    events: n(1),
    resources: n(2),
    previews: n(3),
    coverage_profiles: n(4),
    expiry_grants: n(5),
    by_store: byStore,
  };
}

/** Counts missing parents, unindexed envelopes and unregistered coverage profiles. */
export async function linkChecks(
  db: TraceDb,
  marks: RetentionMarks,
): Promise<LinkCounts> {
  // Envelopes whose index rows retention removed on purpose (by event time
  // and outcome, the rule parity applies) are not missing.
  const retained = retainedOutSql(marks, "e");
  const [parents, unindexed, profiles] = await db.client.batch([
    `SELECT COUNT(*) AS n FROM obs_events c
     WHERE c.parent_event_id IS NOT NULL AND NOT EXISTS (
       SELECT 1 FROM obs_events p
       WHERE p.application_id = c.application_id AND p.event_id = c.parent_event_id)`,
    {
      sql: `SELECT COUNT(*) AS n FROM obs_envelopes e
            WHERE NOT EXISTS (SELECT 1 FROM obs_events x WHERE x.seq = e.seq)
              AND NOT ${retained.sql}`,
      args: retained.args,
    },
    await unregisteredProfilesSql(db),
  ], "read");
  return {
    missing_parent_links: Number(parents!.rows[0]?.n ?? 0),
    unindexed_envelopes: Number(unindexed!.rows[0]?.n ?? 0),
    unregistered_coverage_profiles: Number(profiles!.rows[0]?.n ?? 0),
  };
}

/**
 * Counts profiles events name but nobody registered: per tenant once profiles
 * are keyed by tenant (an empty application_id registers a profile for every
 * tenant), by name before that.
 */
async function unregisteredProfilesSql(db: TraceDb): Promise<string> {
  const columns = await db.client.execute(
    "SELECT name FROM pragma_table_info('obs_coverage_profiles')",
  );
  const perTenant = columns.rows.some((row) => row.name === "application_id");
  return perTenant
    ? `SELECT COUNT(*) AS n FROM (
         SELECT DISTINCT application_id, coverage_profile FROM obs_events e
         WHERE coverage_profile IS NOT NULL AND NOT EXISTS (
           SELECT 1 FROM obs_coverage_profiles p
           WHERE p.name = e.coverage_profile
             AND p.application_id IN (e.application_id, '')))`
    : `SELECT COUNT(DISTINCT coverage_profile) AS n FROM obs_events
       WHERE coverage_profile IS NOT NULL
         AND coverage_profile NOT IN (SELECT name FROM obs_coverage_profiles)`;
}

/** Counts stored and truncated previews from their small columns. */
export async function truncation(
  db: TraceDb,
): Promise<PreviewTruncation> {
  // Reads the small columns only; preview content is never touched.
  const result = await db.client.execute(
    "SELECT COUNT(*) AS n, TOTAL(truncated = 1) AS truncated FROM obs_previews",
  );
  const row = result.rows[0];
  return {
    previews: Number(row?.n ?? 0),
    truncated_previews: Number(row?.truncated ?? 0),
  };
}

/** Groups the latest `sample` events by instrumentation name and version. */
export async function instrumentationVersions(
  db: TraceDb,
  sample: number,
): Promise<InstrumentationVersions> {
  const result = await db.client.execute({
    sql:
      `SELECT name, version, COUNT(*) AS n, SUM(COUNT(*)) OVER () AS sampled FROM (
            SELECT json_extract(meta, '$.attributes."instrumentation.name"') AS name,
                   json_extract(meta, '$.attributes."instrumentation.version"') AS version
            FROM obs_events ORDER BY ts DESC, seq DESC LIMIT ?)
          GROUP BY name, version ORDER BY n DESC, name, version LIMIT 50`,
    args: [sample],
  });
  return {
    sampled_events: Number(result.rows[0]?.sampled ?? 0),
    versions: result.rows.map((row) => ({
      name: row.name === null ? null : String(row.name),
      version: row.version === null ? null : String(row.version),
      events: Number(row.n),
    })),
  };
}
