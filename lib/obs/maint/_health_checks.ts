/**
 * The checks health runs, each reading only counts, names and small columns
 * (never a payload or a preview): process counters, index readiness, row
 * counts, broken links, truncation and instrumentation versions.
 *
 * @module
 */

import type { TraceDb } from "../../db.ts";
import { nextTurn } from "../_turn_line.ts";
import {
  COUNTER_NAMES,
  type CounterName,
  counterSnapshot,
} from "../counters.ts";
import { type StoreName, STORES } from "../model.ts";
import { expectedSchemaObjects } from "../schema_objects.ts";
import { retainedOutSql, type RetentionMarks } from "./_state.ts";
import { erasedParentSql } from "./erasure_links.ts";

/** Counters of the writing process, or `unknown` when this reader has none. */
export interface CounterReport {
  /** `recorded` in the writing process; `unknown` elsewhere, never zero. */
  state: "recorded" | "unknown";
  /** Whose counters these are. */
  scope: "this_process" | null;
  /** When the process started counting, ISO 8601. */
  since: string | null;
  /** Each counter's value, `null` when unknown. */
  values: Record<CounterName, number | null>;
}

/** Whether every index and trigger the schema declares exists. */
export interface IndexReadiness {
  /** True when none is missing. */
  ready: boolean;
  /** Indexes and triggers the schema declares. */
  expected: number;
  /** The names of those that do not exist. */
  missing: string[];
}

/** Rows of each observability table, and index rows by store. */
export interface TableCounts {
  /** Source envelopes. */
  envelopes: number;
  /** Index rows (events). */
  events: number;
  /** Resource reference rows. */
  resources: number;
  /** Stored previews. */
  previews: number;
  /** Registered coverage profiles. */
  coverage_profiles: number;
  /** Reviewed source expiry grants: one per envelope a source expiry removed whose index row remains. */
  expiry_grants: number;
  /**
   * Tombstones of events an erasure of scope `all` removed (schema version
   * 6; 0 before it): ingest answers a resend of one as a duplicate.
   */
  erased_events: number;
  /** Events per store. */
  by_store: Record<StoreName, number>;
}

/** Links the index should hold but does not. */
export interface LinkCounts {
  /** Events naming a parent event the index does not hold. */
  missing_parent_links: number;
  /** Envelopes without index rows. */
  unindexed_envelopes: number;
  /** Profiles events declare that were never registered. */
  unregistered_coverage_profiles: number;
}

/** How many previews were stored, and how many of them truncated. */
export interface PreviewTruncation {
  /** Stored previews. */
  previews: number;
  /** Those cut to the bound when written. */
  truncated_previews: number;
}

/** Instrumentation names and versions among the latest events. */
export interface InstrumentationVersions {
  /** Latest events sampled for versions. */
  sampled_events: number;
  /** Events per instrumentation name and version. */
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

/** Rows counted by `obs_counts` (schema version 3) and what they are counted as. */
interface KeptCounts {
  counts: TableCounts;
  truncation: PreviewTruncation;
}

/**
 * Row counts of every observability table: read from `obs_counts`, which
 * triggers keep exact, when the schema has it (`kept`, version 3); counted
 * row by row otherwise. The two small tables are always counted.
 */
export async function tableCounts(
  db: TraceDb,
  schema: { kept: boolean; tombstones: "none" | "uncounted" | "counted" },
): Promise<KeptCounts> {
  if (!schema.kept) return await countedTables(db);
  const [rows, profiles, grants, tombstones] = await db.client.batch([
    "SELECT key, n FROM obs_counts",
    "SELECT COUNT(*) AS n FROM obs_coverage_profiles",
    "SELECT COUNT(*) AS n FROM obs_expiry_grants",
    // Version 6 has tombstones but counts them from version 7 on: health
    // reads an index that awaits its upgrade (and says so) by counting them.
    ...(schema.tombstones === "uncounted"
      ? ["SELECT COUNT(*) AS n FROM obs_erased_events"]
      : []),
  ], "read");
  const n = new Map(rows!.rows.map((row) => [String(row.key), Number(row.n)]));
  const byStore = Object.fromEntries(
    STORES.map((store) => [store, n.get(`events.${store}`) ?? 0]),
  ) as Record<StoreName, number>;
  return {
    counts: {
      envelopes: n.get("envelopes") ?? 0,
      events: Object.values(byStore).reduce((a, b) => a + b, 0),
      resources: n.get("resources") ?? 0,
      previews: n.get("previews") ?? 0,
      coverage_profiles: Number(profiles!.rows[0]?.n ?? 0),
      expiry_grants: Number(grants!.rows[0]?.n ?? 0),
      erased_events: tombstones
        ? Number(tombstones.rows[0]?.n ?? 0)
        : n.get("erased_events") ?? 0,
      by_store: byStore,
    },
    truncation: {
      previews: n.get("previews") ?? 0,
      truncated_previews: n.get("previews.truncated") ?? 0,
    },
  };
}

/** Counts every table row by row: for schemas older than version 3, which keep no counts. */
async function countedTables(db: TraceDb): Promise<KeptCounts> {
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
    "SELECT TOTAL(truncated = 1) AS n FROM obs_previews",
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
    counts: {
      envelopes: n(0),
      events: n(1),
      resources: n(2),
      previews: n(3),
      coverage_profiles: n(4),
      expiry_grants: n(5),
      // Tombstones came with version 6; these schemas are older than 3.
      erased_events: 0,
      by_store: byStore,
    },
    truncation: { previews: n(3), truncated_previews: n(tables.length + 1) },
  };
}

/** Events or envelopes each link-check query reads: a slice short enough not to hold the event loop. */
export const LINK_CHECK_SLICE = 20_000;

/**
 * Counts missing parents, unindexed envelopes and unregistered coverage
 * profiles, reading `seq` ranges of {@link LINK_CHECK_SLICE} rows and
 * yielding to the event loop between them: the local libSQL client runs
 * each query on the calling thread, so one query over a million rows would
 * block every other request for seconds.
 */
export async function linkChecks(
  db: TraceDb,
  marks: RetentionMarks,
): Promise<LinkCounts> {
  // Envelopes whose index rows retention removed on purpose (by event time
  // and outcome, the rule parity applies) are not missing, nor is a parent
  // retention removed while its child, holding an outcome, is kept longer,
  // nor one an erasure removed (it marked the events that named it).
  const retained = retainedOutSql(marks, "e");
  const profilesSql = await unregisteredProfilesSql(db);
  let missingParents = 0;
  let unindexed = 0;
  const unregistered = new Set<string>();
  for await (const [after, upTo] of seqSlices(db, "obs_events")) {
    const [parents, profiles] = await db.client.batch([
      {
        sql: `SELECT COUNT(*) AS n FROM obs_events c
              WHERE c.seq > ? AND c.seq <= ? AND c.parent_event_id IS NOT NULL
                AND NOT EXISTS (SELECT 1 FROM obs_events p
                  WHERE p.application_id = c.application_id AND p.event_id = c.parent_event_id)
                AND NOT EXISTS (SELECT 1 FROM obs_envelopes e
                  WHERE e.application_id = c.application_id AND e.event_id = c.parent_event_id
                    AND ${retained.sql})
                AND NOT ${erasedParentSql("c")}`,
        args: [after, upTo, ...retained.args],
      },
      { sql: profilesSql, args: [after, upTo] },
    ], "read");
    missingParents += Number(parents!.rows[0]?.n ?? 0);
    for (const row of profiles!.rows) unregistered.add(String(row.profile));
  }
  for await (const [after, upTo] of seqSlices(db, "obs_envelopes")) {
    const result = await db.client.execute({
      sql: `SELECT COUNT(*) AS n FROM obs_envelopes e
            WHERE e.seq > ? AND e.seq <= ?
              AND NOT EXISTS (SELECT 1 FROM obs_events x WHERE x.seq = e.seq)
              AND NOT ${retained.sql}`,
      args: [after, upTo, ...retained.args],
    });
    unindexed += Number(result.rows[0]?.n ?? 0);
  }
  return {
    missing_parent_links: missingParents,
    unindexed_envelopes: unindexed,
    unregistered_coverage_profiles: unregistered.size,
  };
}

/** `(after, upTo]` ranges of `seq` covering `table` in slices, with a turn of the event loop before each. */
async function* seqSlices(
  db: TraceDb,
  table: "obs_events" | "obs_envelopes",
): AsyncGenerator<[number, number]> {
  const bounds = await db.client.execute(
    `SELECT MIN(seq) AS lo, MAX(seq) AS hi FROM ${table}`,
  );
  const lo = bounds.rows[0]?.lo;
  const hi = bounds.rows[0]?.hi;
  if (lo === null || lo === undefined || hi === null || hi === undefined) {
    return;
  }
  for (let after = Number(lo) - 1; after < Number(hi);) {
    const upTo = Math.min(Number(hi), after + LINK_CHECK_SLICE);
    await nextTurn();
    yield [after, upTo];
    after = upTo;
  }
}

/**
 * Distinct unregistered profiles of the events in one `seq` range (`?1`,
 * `?2`]: per tenant once profiles are keyed by tenant (an empty
 * application_id registers a profile for every tenant), by name before that.
 */
async function unregisteredProfilesSql(db: TraceDb): Promise<string> {
  const columns = await db.client.execute(
    "SELECT name FROM pragma_table_info('obs_coverage_profiles')",
  );
  const perTenant = columns.rows.some((row) => row.name === "application_id");
  return perTenant
    ? `SELECT DISTINCT e.application_id || char(0) || e.coverage_profile AS profile
       FROM obs_events e
       WHERE e.seq > ?1 AND e.seq <= ?2 AND e.coverage_profile IS NOT NULL
         AND NOT EXISTS (
           SELECT 1 FROM obs_coverage_profiles p
           WHERE p.name = e.coverage_profile
             AND p.application_id IN (e.application_id, ''))`
    : `SELECT DISTINCT e.coverage_profile AS profile FROM obs_events e
       WHERE e.seq > ?1 AND e.seq <= ?2 AND e.coverage_profile IS NOT NULL
         AND e.coverage_profile NOT IN (SELECT name FROM obs_coverage_profiles)`;
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
