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
 * Cost: row counts come from `obs_counts` (kept by triggers), the other
 * figures from a few bounded queries, except the link checks, which read
 * every event in slices that yield to the event loop. {@link obsHealth}
 * computes them on every call (seconds at a million events, never blocking
 * the loop for long); `HealthMonitor` (`health_monitor.ts`) keeps them for a
 * while and says how old they are, for a server.
 *
 * @module
 */

import { appliedVersions, type TraceDb } from "../../db.ts";
import { ENVELOPE_VERSION, isoOrNull } from "../normalize.ts";
import { OBS_COMPONENT, OBS_SCHEMA_VERSION } from "../schema.ts";
import {
  type CounterReport,
  counterReport,
  type IndexReadiness,
  indexReadiness,
  type InstrumentationVersions,
  instrumentationVersions,
  linkChecks,
  type LinkCounts,
  type PreviewTruncation,
  type TableCounts,
  tableCounts,
} from "./_health_checks.ts";
import { probeLatency } from "./_probes.ts";
export { MAX_LATENCY_SAMPLES } from "./_probes.ts";
import { readRetentionMarks, type RetentionMarks } from "./_state.ts";
import {
  type ErasureKeyState,
  type HealthAlert,
  healthAlerts,
  type HealthStatus,
  healthStatus,
} from "./health_alerts.ts";
import type { ProbeLatency } from "./latency.ts";
import { readRecordedParity, type RecordedParity } from "./parity.ts";

export type {
  CounterReport,
  IndexReadiness,
  InstrumentationVersions,
  LinkCounts,
  PreviewTruncation,
  TableCounts,
};

/** The full health report. */
export interface ObsHealth {
  /** `failing`, `degraded`, `unknown` or `ok`, decided by the alerts. */
  status: HealthStatus;
  /** When the report was made, ISO 8601. */
  checked_at: string;
  /** The data directory's erasure key, as the caller found it (`unchecked` when it did not say). */
  erasure_key: ErasureKeyState;
  /** Whether the index tables exist, their schema version against the one expected, and the envelope format version. */
  schema: {
    provisioned: boolean;
    version: number | null;
    expected: number;
    envelope_version: number;
  };
  /** Instrumentation names and versions among the latest events. */
  instrumentation: InstrumentationVersions;
  /** Rows per table; `null` before the index exists. */
  counts: TableCounts | null;
  /** Links the index should hold but does not; `null` before the index exists. */
  links: LinkCheck | null;
  /** Previews stored and truncated; `null` before the index exists. */
  truncation: PreviewTruncation | null;
  /** Timed samples of the probe queries; `null` before the index exists. */
  latency: ProbeLatency | null;
  /** Whether every declared index and trigger exists. */
  indexes: IndexReadiness;
  /** This process's write and callback counters (`unknown` outside the writing process). */
  counters: CounterReport;
  /** The last parity check over every tenant: the only one that sets the parity alerts' status. */
  parity: RecordedParity | { status: "unknown" };
  /** The last parity check of each tenant checked alone (shown, never clearing `parity`). */
  parity_by_tenant: RecordedParity[];
  /** The event-time cutoffs of the last retention run, `null` before one ran. */
  retention: { metadata_before: string | null; outcomes_before: string | null };
  /** What needs attention, each with a stable code and one sentence. */
  alerts: HealthAlert[];
}

/** Link checks with when they were computed: fresh, or kept by a `HealthMonitor`. */
export interface LinkCheck extends LinkCounts {
  /** When these figures were computed. */
  checked_at: string;
  /** Their age when this report was made, in seconds (0 when computed for it). */
  age_seconds: number;
}

/** Where a report takes its link checks from (given the retention marks and the event count). */
export type LinkCheckSource = (
  marks: RetentionMarks,
  events: number,
) => Promise<LinkCheck>;

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
  /** The data directory's erasure key as the caller found it (default `unchecked`); `lost` raises `erasure_key_lost`. */
  erasureKey?: ErasureKeyState;
}

/** Reports the health of the observability index, computing every figure now; never creates a table. */
export async function obsHealth(
  db: TraceDb,
  options: ObsHealthOptions = {},
): Promise<ObsHealth> {
  const now = options.now ?? Date.now;
  return await healthReport(db, options, async (marks) => {
    const at = now();
    return {
      ...await linkChecks(db, marks),
      checked_at: new Date(at).toISOString(),
      age_seconds: 0,
    };
  });
}

/** The report, with link checks from `links`. */
export async function healthReport(
  db: TraceDb,
  options: ObsHealthOptions,
  links: LinkCheckSource,
): Promise<ObsHealth> {
  const now = (options.now ?? Date.now)();
  const version = (await appliedVersions(db)).get(OBS_COMPONENT) ?? null;
  const indexes = await indexReadiness(db);
  const counters = counterReport(options.processCounters ?? false);
  const base = {
    checked_at: new Date(now).toISOString(),
    erasure_key: options.erasureKey ?? "unchecked",
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
    });
  }
  const marks = await readRetentionMarks(db);
  const recorded = await readRecordedParity(db);
  const kept = await tableCounts(db, {
    kept: version >= COUNTS_SCHEMA_VERSION,
    tombstones: version >= TOMBSTONE_COUNT_SCHEMA_VERSION
      ? "counted"
      : version >= TOMBSTONES_SCHEMA_VERSION
      ? "uncounted"
      : "none",
  });
  return finish({
    ...base,
    instrumentation: await instrumentationVersions(
      db,
      options.versionSample ?? 10_000,
    ),
    counts: kept.counts,
    links: await links(marks, kept.counts.events),
    truncation: kept.truncation,
    latency: await probeLatency(db, options.latencySamples ?? 5),
    parity: recorded.unscoped ?? { status: "unknown" },
    parity_by_tenant: recorded.scoped,
    retention: {
      metadata_before: isoOrNull(marks.metadataBefore),
      outcomes_before: isoOrNull(marks.outcomesBefore),
    },
  });
}

/** The schema version from which `obs_counts` keeps the row counts. */
const COUNTS_SCHEMA_VERSION = 3;
/** The schema version that made the tombstones of erased events. */
const TOMBSTONES_SCHEMA_VERSION = 6;
/** The schema version from which `obs_counts` keeps their number. */
const TOMBSTONE_COUNT_SCHEMA_VERSION = 7;

/** Adds the alerts and the status they add up to (status first, alerts last). */
function finish(draft: Omit<ObsHealth, "status" | "alerts">): ObsHealth {
  const alerts = healthAlerts(draft);
  return { status: healthStatus(alerts), ...draft, alerts };
}
