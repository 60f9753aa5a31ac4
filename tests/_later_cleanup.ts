/** A later `external-cleanup` of a completed run, recorded in the ledger as the command records one. */

import type { TraceDb } from "../lib/db.ts";
import { recordCleanup } from "../lib/ledger/cleanups.ts";
import type { RunReport } from "../lib/runner/report.ts";

/**
 * Records cleanup `cleanupId` of `report`'s ids: complete (nothing left) or
 * as incomplete as the run's own. It queried the markers when the report
 * kept them, as the command does, unless `markersQueried` says otherwise
 * (`false`: an entry as recorded before runs kept their markers).
 */
export async function recordLaterCleanup(
  db: TraceDb,
  report: RunReport,
  cleanupId: string,
  options: { complete: boolean; at?: string; markersQueried?: boolean },
): Promise<void> {
  const at = options.at ?? "2099-01-01T00:01:00.000Z";
  const queried = options.markersQueried ?? report.markers !== undefined;
  await recordCleanup(db, {
    schema: "trace.cleanup/1",
    cleanup_id: cleanupId,
    run_id: report.run_id,
    target_id: report.target.id,
    ids_from: "report",
    namespaces: report.namespaces,
    issued: {
      test: report.issued.test.length,
      control: report.issued.control.length,
    },
    started_at: at,
    finished_at: new Date(Date.parse(at) + 1000).toISOString(),
    // Entries recorded before runs kept their markers have no such field.
    ...(queried ? { markers_queried: true } : {}),
    outcome: options.complete
      ? {
        ...report.cleanup,
        cleanup_complete: true,
        marker_seen: queried
          ? { test: false, control: false }
          : { test: null, control: null },
        problems: [],
      }
      : report.cleanup,
  });
}
