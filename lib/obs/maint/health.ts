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
  truncation,
} from "./_health_checks.ts";
import { probeLatency } from "./_probes.ts";
import { readRetentionMarks } from "./_state.ts";
import {
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
  status: HealthStatus;
  checked_at: string;
  schema: {
    provisioned: boolean;
    version: number | null;
    expected: number;
    envelope_version: number;
  };
  instrumentation: InstrumentationVersions;
  counts: TableCounts | null;
  links: LinkCounts | null;
  truncation: PreviewTruncation | null;
  latency: ProbeLatency | null;
  indexes: IndexReadiness;
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
      metadata_before: isoOrNull(marks.metadataBefore),
      outcomes_before: isoOrNull(marks.outcomesBefore),
    },
  });
}

/** Adds the alerts and the status they add up to (status first, alerts last). */
function finish(draft: Omit<ObsHealth, "status" | "alerts">): ObsHealth {
  const alerts = healthAlerts(draft);
  return { status: healthStatus(alerts), ...draft, alerts };
}
