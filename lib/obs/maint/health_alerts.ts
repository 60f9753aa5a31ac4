/**
 * The alerts health may raise: a stable code, a severity and one sentence
 * saying what to do, each decided from counts and recorded results only
 * (never from timings), so the same index always gives the same alerts.
 *
 * @module
 */

import type {
  CounterReport,
  IndexReadiness,
  LinkCounts,
  PreviewTruncation,
  TableCounts,
} from "./_health_checks.ts";
import type { RecordedParity } from "./parity.ts";

/** Alert codes health may raise. */
export const HEALTH_ALERT_CODES = [
  "callback_failures",
  "erasure_key_lost",
  "erasure_key_unusable",
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

/** Alert severities; `critical` makes the status `failing`, `warning` `degraded`; `info` changes nothing (but see {@link HealthStatus}). */
export const ALERT_SEVERITIES = ["critical", "warning", "info"] as const;
/** One of {@link ALERT_SEVERITIES}. */
export type AlertSeverity = typeof ALERT_SEVERITIES[number];

/** What each alert means and what to do about it, in one sentence. */
export const HEALTH_ALERT_MESSAGES: Record<HealthAlertCode, string> = {
  callback_failures:
    "Event callbacks failed in the serving process; check the server log for the failing callback",
  erasure_key_lost:
    "The data directory's erasure.key is missing while the ledger holds erasure receipts made with it, so erasure is off (everything else works); restore erasure.key from a backup of the data directory (then restart trace serve if it runs)",
  erasure_key_unusable:
    "The data directory's erasure.key cannot be read or does not hold a key, so every erasure refuses; restore erasure.key from a backup of the data directory",
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
    "Events declare coverage profiles nobody registered for their application, so coverage counts those tasks as not covered; the process that records the events registers its profiles, through registerCoverageProfile() in the Trace library (mod.ts), which no trace command can do for it",
  write_failures:
    "The serving process failed to write events; check the server log and the database's free space and permissions",
};

/** One deterministic alert. */
export interface HealthAlert {
  /** Stable code. */
  code: HealthAlertCode;
  /** `critical` makes the status `failing`, `warning` `degraded`. */
  severity: AlertSeverity;
  /** How many rows or events the alert concerns, when countable. */
  count: number | null;
  /** What the alert means and what to do, in one sentence. */
  message: string;
}

/** Overall statuses, from worst to best. */
export const HEALTH_STATUSES = [
  "failing",
  "degraded",
  "unknown",
  "ok",
] as const;

/**
 * Overall status: `failing` with a critical alert, `degraded` with a warning;
 * otherwise `unknown` while an index that holds events has never had a
 * whole-index parity check (nothing is known to be wrong, and not everything
 * is known), else `ok`.
 */
export type HealthStatus = typeof HEALTH_STATUSES[number];

/**
 * The data directory's erasure key as the reporting process found it:
 * `present`; `absent` (the first erasure makes it); `lost` (missing while
 * receipts made with it need it: erasure is off until it is restored);
 * `unusable` (unreadable, or not a key: every erasure refuses); `unchecked` (the caller did not say, e.g. a library reader without a data
 * directory).
 */
export type ErasureKeyState =
  | "present"
  | "absent"
  | "lost"
  | "unusable"
  | "unchecked";

/** What the alert rules read from a health report. */
export interface HealthFacts {
  erasure_key: ErasureKeyState;
  schema: { provisioned: boolean; version: number | null; expected: number };
  indexes: IndexReadiness;
  counts: TableCounts | null;
  links: LinkCounts | null;
  truncation: PreviewTruncation | null;
  counters: CounterReport;
  parity: RecordedParity | { status: "unknown" };
  parity_by_tenant: RecordedParity[];
}

/** The alerts `report` raises, sorted by code: the same facts always give the same alerts. */
export function healthAlerts(report: HealthFacts): HealthAlert[] {
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
  // A profile is the host's own declaration, which the index cannot check:
  // not registering one is a fact to know, not a fault of the index.
  if (links && links.unregistered_coverage_profiles > 0) {
    add(
      "unregistered_coverage_profiles",
      "info",
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
  // Erasure off is a warning, not a failure: everything else the server
  // does still works, and a failing status would take it out of rotation.
  if (report.erasure_key === "lost") add("erasure_key_lost", "warning");
  if (report.erasure_key === "unusable") {
    add("erasure_key_unusable", "warning");
  }
  if (report.schema.provisioned) parityAlerts(report, add);
  return alerts.sort((a, b) => a.code.localeCompare(b.code));
}

function parityAlerts(
  report: HealthFacts,
  add: (code: HealthAlertCode, severity: AlertSeverity, count?: number) => void,
): void {
  const status = report.parity.status;
  // A check that never ran found nothing wrong: that is unknown, not
  // degraded. The count says how many envelopes it has yet to look at.
  if (status === "unknown") {
    add("parity_unknown", "info", report.counts?.envelopes ?? 0);
  } else if (status === "mismatch") add("parity_failed", "critical");
  else if (status === "incomplete") add("parity_incomplete", "warning");
  // A tenant check newer than the whole-index check that found a mismatch is
  // news the whole-index result does not cover yet; older ones are superseded.
  const since = "checked_at" in report.parity ? report.parity.checked_at : "";
  const failed = report.parity_by_tenant.filter((p) =>
    p.status === "mismatch" && p.checked_at > since
  );
  if (failed.length > 0) add("parity_tenant_failed", "warning", failed.length);
}

/** The status `alerts` add up to (see {@link HealthStatus}). */
export function healthStatus(alerts: readonly HealthAlert[]): HealthStatus {
  if (alerts.some((a) => a.severity === "critical")) return "failing";
  if (alerts.some((a) => a.severity === "warning")) return "degraded";
  const unchecked = alerts.some((a) =>
    a.code === "parity_unknown" && (a.count ?? 0) > 0
  );
  return unchecked ? "unknown" : "ok";
}
