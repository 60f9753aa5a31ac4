/**
 * Whether a run's operation never worked: every request of it the report
 * records as failed (two or more) answered an HTTP 5xx status of the
 * application's own, and none of its requests left a reading behind. Rate
 * limits and restarts come and go, so some requests get through; an
 * operation that failed from its first request on points at its own
 * handler. Read from what the report keeps (its request errors, and the
 * readings an answered request leaves), so it reads old reports too.
 *
 * Ingest is not judged: it stops at its first failed request, and one
 * failure cannot show that an operation never worked.
 *
 * @module
 */

import type { Operation } from "../contract/protocol.ts";
import type { RequestErrorRecord, RunReport } from "./report.ts";

/** The operations a run repeats, so that their failures can add up. */
export type RepeatedOperation = Exclude<Operation, "ingest">;

/**
 * Whether every request of `op` in `report` failed with an HTTP 5xx status
 * of the application's own, from the first one on: two or more of them, and
 * none a 502, 503 or 504, which a restart or a gateway in front of the
 * adapter answers.
 */
export function failedFromFirst(
  report: RunReport,
  op: RepeatedOperation,
): boolean {
  const errors = requestErrors(report).filter((e) => e.op === op);
  return errors.length >= 2 && errors.every(applicationError) &&
    !answered(report, op);
}

/** Every request error the report records, wherever in the run it came. */
function requestErrors(report: RunReport): RequestErrorRecord[] {
  return [
    ...report.baseline.errors,
    ...(report.deletion?.error ? [report.deletion.error] : []),
    ...report.samples.flatMap((s) => s.errors),
    ...report.cleanup.deletes.flatMap((d) => d.error ? [d.error] : []),
  ];
}

/** Statuses a gateway or a restarting application answers, rather than a handler's own failure. */
const TRANSIENT_STATUSES = new Set([502, 503, 504]);

function applicationError(error: RequestErrorRecord): boolean {
  const status = error.status ?? 0;
  return error.failure === "http_status" && status >= 500 &&
    !TRANSIENT_STATUSES.has(status);
}

/** Whether some request of `op` gave a usable answer, by what it left in the report. */
function answered(report: RunReport, op: RepeatedOperation): boolean {
  switch (op) {
    case "query":
      return queryReadings(report).some((seen) => seen !== null);
    case "inventory":
      return inventoryReadings(report).some((reading) => reading !== null);
    case "delete":
      return report.deletion?.acknowledged === true ||
        report.cleanup.deletes.some((d) => d.acknowledged);
  }
}

/** Whether each marker query's answer held its marker; `null` where the query gave no answer. */
function queryReadings(report: RunReport): (boolean | null)[] {
  const { baseline, cleanup } = report;
  return [
    baseline.marker_seen,
    baseline.control_seen,
    ...report.samples.flatMap((s) => [s.marker_seen, s.control_seen]),
    cleanup.marker_seen.test,
    cleanup.marker_seen.control,
  ];
}

/** What each inventory read; `null` where the inventory gave no answer. */
function inventoryReadings(report: RunReport): unknown[] {
  const { baseline, cleanup } = report;
  return [
    baseline.inventory,
    baseline.control_inventory,
    // A report from before samples kept the control inventory has only
    // whether it counted the control record.
    ...report.samples.flatMap((s) => [
      s.inventory,
      s.control_inventory ?? null,
      s.control_present,
    ]),
    cleanup.remaining.test,
    cleanup.remaining.control,
  ];
}
