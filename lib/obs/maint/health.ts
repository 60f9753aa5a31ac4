/**
 * Health of the observability index: schema and instrumentation versions,
 * row counts, broken links, truncation, query latency samples, index
 * readiness, process counters and the recorded parity checks (only a check
 * over every tenant sets the parity status; checks of one tenant are listed
 * apart), summed up as deterministic alerts (stable codes, sorted).
 * Counters are process-local: a reader that is not the writing process
 * reports them as `unknown`, never as zero. Alerts never depend on timing, so
 * the same data gives the same alerts.
 *
 * @module
 */

import type { TraceDb } from "../../db.ts";
import { appliedVersions, type Migration } from "../../db.ts";
import {
  readRetentionMarks,
  retainedOutSql,
  type RetentionMarks,
} from "./_state.ts";
import { type ProbeLatency, probeLatency } from "./_probes.ts";
import {
  COUNTER_NAMES,
  type CounterName,
  counterSnapshot,
} from "../counters.ts";
import { type StoreName, STORES } from "../model.ts";
import { ENVELOPE_VERSION } from "../normalize.ts";
import { readRecordedParity, type RecordedParity } from "./parity.ts";
import {
  OBS_COMPONENT,
  OBS_MIGRATIONS,
  OBS_SCHEMA_VERSION,
} from "../schema.ts";

/** Alert codes health may raise. */
export const HEALTH_ALERT_CODES = [
  "callback_failures",
  "index_not_ready",
  "missing_parent_links",
  "parity_failed",
  "parity_incomplete",
  "parity_tenant_failed",
  "parity_unknown",
  "process_counters_unknown",
  "schema_missing",
  "schema_outdated",
  "truncated_previews",
  "unindexed_envelopes",
  "unregistered_coverage_profiles",
  "write_failures",
] as const;
/** One of {@link HEALTH_ALERT_CODES}. */
export type HealthAlertCode = typeof HEALTH_ALERT_CODES[number];

/** Alert severities; `critical` makes the status `failing`, `warning` `degraded`. */
export const ALERT_SEVERITIES = ["critical", "warning", "info"] as const;
/** One of {@link ALERT_SEVERITIES}. */
export type AlertSeverity = typeof ALERT_SEVERITIES[number];

/** What each alert means and what to do about it, in one sentence. */
export const HEALTH_ALERT_MESSAGES: Record<HealthAlertCode, string> = {
  callback_failures:
    "Event callbacks failed in the serving process; check the server log for the failing callback",
  index_not_ready:
    "Indexes or triggers the schema declares are missing, so queries may be slow; recreate them from the schema migrations or restore a backup",
  missing_parent_links:
    "Some events name a parent event the index does not hold; send the parent events or ignore this if they were never recorded",
  parity_failed:
    "The last whole-index parity check found index rows that differ from their envelopes; run trace obs backfill --apply, then trace obs parity",
  parity_incomplete:
    "The last whole-index parity check covered more envelopes than its page bound; rerun trace obs parity with a larger --page-bound",
  parity_tenant_failed:
    "A single-application parity check found a mismatch newer than the whole-index check; run trace obs backfill --apply, then trace obs parity",
  parity_unknown:
    "No whole-index parity check has run yet; run trace obs parity",
  process_counters_unknown:
    "Write and callback failure counters live in the serving process; read GET /api/health from trace serve",
  schema_missing:
    "The observability tables do not exist yet; run trace obs init",
  schema_outdated:
    "The observability tables are older than this build needs; run trace obs init to upgrade them",
  truncated_previews:
    "Some previews were longer than 16,000 characters and were stored truncated; nothing to do unless full previews matter",
  unindexed_envelopes:
    "Some stored envelopes have no index rows, so queries miss them; run trace obs backfill --apply",
  unregistered_coverage_profiles:
    "Events name coverage profiles nobody registered, so coverage cannot judge them; register them with registerCoverageProfile() or fix the events' coverage_profile",
  write_failures:
    "The serving process failed to write events; check the server log and the database's free space and permissions",
};

/** One deterministic alert. */
export interface HealthAlert {
  code: HealthAlertCode;
  severity: AlertSeverity;
  /** How many rows or events the alert concerns, when countable. */
  count: number | null;
  /** What the alert means and what to do, in one sentence. */
  message: string;
}

/** Counters of the writing process, or `unknown` when this reader has none. */
export interface CounterReport {
  state: "recorded" | "unknown";
  scope: "this_process" | null;
  since: string | null;
  values: Record<CounterName, number | null>;
}

/** The full health report. */
export interface ObsHealth {
  status: "ok" | "degraded" | "failing";
  checked_at: string;
  schema: {
    provisioned: boolean;
    version: number | null;
    expected: number;
    envelope_version: number;
  };
  instrumentation: {
    /** Latest events sampled for versions. */
    sampled_events: number;
    versions: { name: string | null; version: string | null; events: number }[];
  };
  counts: {
    envelopes: number;
    events: number;
    resources: number;
    previews: number;
    coverage_profiles: number;
    expiry_grants: number;
    by_store: Record<StoreName, number>;
  } | null;
  links: {
    missing_parent_links: number;
    unindexed_envelopes: number;
    unregistered_coverage_profiles: number;
  } | null;
  truncation: { previews: number; truncated_previews: number } | null;
  latency: ProbeLatency | null;
  indexes: { ready: boolean; expected: number; missing: string[] };
  counters: CounterReport;
  /** The last parity check over every tenant: the only one that sets the parity alerts' status. */
  parity: RecordedParity | { status: "unknown" };
  /** The last parity check of each tenant checked alone (shown, never clearing `parity`). */
  parity_by_tenant: RecordedParity[];
  retention: { metadata_before: string | null; outcomes_before: string | null };
  alerts: HealthAlert[];
}

/** Options for {@link obsHealth}. */
export interface ObsHealthOptions {
  /** This process is the writer (e.g. the server): report its counters (default `false`). */
  processCounters?: boolean;
  /** Timed runs of each probe query (default 5). */
  latencySamples?: number;
  /** Latest events sampled for instrumentation versions (default 10,000). */
  versionSample?: number;
  /** Clock in epoch ms (tests pin it). */
  now?: () => number;
}

/**
 * Every index and trigger the schema declares, by name, replaying the
 * migrations in order: a later step may drop an index or trigger, drop or
 * rename its table (a re-keyed table is rebuilt that way), or create it anew.
 */
export function expectedSchemaObjects(
  migrations: readonly Migration[] = OBS_MIGRATIONS,
): string[] {
  // Object name -> the table it belongs to.
  const objects = new Map<string, string>();
  const steps = [...migrations].sort((a, b) => a.version - b.version);
  for (const statement of steps.flatMap((m) => m.statements)) {
    applySchemaStatement(objects, statement);
  }
  return [...objects.keys()].sort();
}

const NAME = String.raw`["\x60\[]?(\w+)["\x60\]]?`;
const CREATE_OBJECT = new RegExp(
  String
    .raw`^\s*CREATE\s+(?:UNIQUE\s+)?(?:INDEX|TRIGGER)\s+(?:IF\s+NOT\s+EXISTS\s+)?${NAME}[\s\S]*?\sON\s+${NAME}`,
  "i",
);
const DROP_OBJECT = new RegExp(
  String.raw`^\s*DROP\s+(?:INDEX|TRIGGER)\s+(?:IF\s+EXISTS\s+)?${NAME}`,
  "i",
);
const DROP_TABLE = new RegExp(
  String.raw`^\s*DROP\s+TABLE\s+(?:IF\s+EXISTS\s+)?${NAME}`,
  "i",
);
const RENAME_TABLE = new RegExp(
  String.raw`^\s*ALTER\s+TABLE\s+${NAME}\s+RENAME\s+TO\s+${NAME}`,
  "i",
);

function applySchemaStatement(
  objects: Map<string, string>,
  statement: string,
): void {
  let match = CREATE_OBJECT.exec(statement);
  if (match) {
    objects.set(match[1]!, match[2]!);
    return;
  }
  match = DROP_OBJECT.exec(statement);
  if (match) {
    objects.delete(match[1]!);
    return;
  }
  match = DROP_TABLE.exec(statement);
  if (match) {
    // Dropping a table drops its indexes and triggers with it.
    for (const [name, table] of objects) {
      if (table === match[1]) objects.delete(name);
    }
    return;
  }
  match = RENAME_TABLE.exec(statement);
  if (match) {
    for (const [name, table] of objects) {
      if (table === match[1]) objects.set(name, match[2]!);
    }
  }
}

/** Reports the health of the observability index; never creates a table. */
export async function obsHealth(
  db: TraceDb,
  options: ObsHealthOptions = {},
): Promise<ObsHealth> {
  const now = (options.now ?? Date.now)();
  const version = (await appliedVersions(db)).get(OBS_COMPONENT) ?? null;
  const indexes = await indexReadiness(db);
  const counters = counterReport(options.processCounters ?? false);
  const base = {
    checked_at: new Date(now).toISOString(),
    schema: {
      provisioned: version !== null,
      version,
      expected: OBS_SCHEMA_VERSION,
      envelope_version: ENVELOPE_VERSION,
    },
    indexes,
    counters,
  };
  if (version === null) {
    return finish({
      ...base,
      instrumentation: { sampled_events: 0, versions: [] },
      counts: null,
      links: null,
      truncation: null,
      latency: null,
      parity: { status: "unknown" },
      parity_by_tenant: [],
      retention: { metadata_before: null, outcomes_before: null },
      alerts: [],
    });
  }
  const marks = await readRetentionMarks(db);
  const recorded = await readRecordedParity(db);
  return finish({
    ...base,
    instrumentation: await instrumentationVersions(
      db,
      options.versionSample ?? 10_000,
    ),
    counts: await tableCounts(db),
    links: await linkChecks(db, marks),
    truncation: await truncation(db),
    latency: await probeLatency(db, options.latencySamples ?? 5),
    parity: recorded.unscoped ?? { status: "unknown" },
    parity_by_tenant: recorded.scoped,
    retention: {
      metadata_before: marks.metadataBefore === null
        ? null
        : new Date(marks.metadataBefore).toISOString(),
      outcomes_before: marks.outcomesBefore === null
        ? null
        : new Date(marks.outcomesBefore).toISOString(),
    },
    alerts: [],
  });
}

function counterReport(processCounters: boolean): CounterReport {
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

async function indexReadiness(db: TraceDb): Promise<ObsHealth["indexes"]> {
  const expected = expectedSchemaObjects();
  const result = await db.client.execute(
    "SELECT name FROM sqlite_master WHERE type IN ('index', 'trigger') AND name LIKE 'obs_%'",
  );
  const present = new Set(result.rows.map((row) => String(row.name)));
  const missing = expected.filter((name) => !present.has(name));
  return { ready: missing.length === 0, expected: expected.length, missing };
}

async function tableCounts(
  db: TraceDb,
): Promise<NonNullable<ObsHealth["counts"]>> {
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

async function linkChecks(
  db: TraceDb,
  marks: RetentionMarks,
): Promise<NonNullable<ObsHealth["links"]>> {
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

async function truncation(
  db: TraceDb,
): Promise<NonNullable<ObsHealth["truncation"]>> {
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

async function instrumentationVersions(
  db: TraceDb,
  sample: number,
): Promise<ObsHealth["instrumentation"]> {
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

type Draft = Omit<ObsHealth, "status">;

function alertsOf(report: Draft): HealthAlert[] {
  const alerts: HealthAlert[] = [];
  const add = (
    code: HealthAlertCode,
    severity: AlertSeverity,
    count: number | null = null,
  ) =>
    alerts.push({
      code,
      severity,
      count,
      message: HEALTH_ALERT_MESSAGES[code],
    });
  if (!report.schema.provisioned) add("schema_missing", "critical");
  else if ((report.schema.version ?? 0) < report.schema.expected) {
    add("schema_outdated", "critical");
  }
  if (report.schema.provisioned && !report.indexes.ready) {
    add("index_not_ready", "critical", report.indexes.missing.length);
  }
  const links = report.links;
  if (links && links.missing_parent_links > 0) {
    add("missing_parent_links", "warning", links.missing_parent_links);
  }
  if (links && links.unindexed_envelopes > 0) {
    add("unindexed_envelopes", "warning", links.unindexed_envelopes);
  }
  if (links && links.unregistered_coverage_profiles > 0) {
    add(
      "unregistered_coverage_profiles",
      "warning",
      links.unregistered_coverage_profiles,
    );
  }
  if (report.truncation && report.truncation.truncated_previews > 0) {
    add("truncated_previews", "info", report.truncation.truncated_previews);
  }
  const values = report.counters.values;
  if (report.counters.state === "unknown") {
    add("process_counters_unknown", "info");
  }
  if ((values.write_failures ?? 0) > 0) {
    add("write_failures", "critical", values.write_failures);
  }
  if ((values.callback_failures ?? 0) > 0) {
    add("callback_failures", "warning", values.callback_failures);
  }
  if (report.schema.provisioned) parityAlerts(report, add);
  return alerts.sort((a, b) => a.code.localeCompare(b.code));
}

function parityAlerts(
  report: Draft,
  add: (code: HealthAlertCode, severity: AlertSeverity, count?: number) => void,
): void {
  const status = report.parity.status;
  // A fresh index with nothing in it has nothing to check yet: that is not
  // a degraded index, so the missing check is only worth a note.
  const empty = (report.counts?.envelopes ?? 0) === 0 &&
    (report.counts?.events ?? 0) === 0;
  if (status === "unknown") add("parity_unknown", empty ? "info" : "warning");
  else if (status === "mismatch") add("parity_failed", "critical");
  else if (status === "incomplete") add("parity_incomplete", "warning");
  // A tenant check newer than the whole-index check that found a mismatch is
  // news the whole-index result does not cover yet; older ones are superseded.
  const since = "checked_at" in report.parity ? report.parity.checked_at : "";
  const failed = report.parity_by_tenant.filter((p) =>
    p.status === "mismatch" && p.checked_at > since
  );
  if (failed.length > 0) add("parity_tenant_failed", "warning", failed.length);
}

function finish(draft: Draft): ObsHealth {
  const alerts = alertsOf(draft);
  const status = alerts.some((a) => a.severity === "critical")
    ? "failing"
    : alerts.some((a) => a.severity === "warning")
    ? "degraded"
    : "ok";
  return { status, ...draft, alerts };
}
