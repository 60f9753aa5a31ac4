/** Completed run reports in the ledger: external and reference history kept apart. */

import type { Transaction } from "@libsql/client";
import type { TraceDb } from "../db.ts";
import { LedgerIntegrityError, UsageError } from "../errors.ts";
import type { RunReport } from "../runner/report.ts";
import {
  appendEntries,
  type LedgerEntry,
  type NewEntry,
  payloadDigest,
  readEntry,
} from "./chain.ts";

const RUN_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** Throws a {@link UsageError} unless `runId` looks like a run id (it names files too). */
export function validateRunId(runId: string): string {
  if (!RUN_ID_PATTERN.test(runId) || runId.includes("..")) {
    throw new UsageError(
      `Invalid run id ${
        JSON.stringify(runId)
      }: expected e.g. run-20261129T214455Z-3f9a1c`,
    );
  }
  return runId;
}

/** Entries written atomically with a run's report (e.g. the replay link). */
export type LinkedEntries = (
  report: RunReport,
  tx: Transaction,
) => Promise<NewEntry[]>;

/** Appends a completed report (external reports as `run`, reference ones as `reference_run`). */
export async function recordRun(
  db: TraceDb,
  report: RunReport,
  linked?: LinkedEntries,
): Promise<LedgerEntry> {
  if (report.state !== "completed") {
    throw new TypeError(
      `Cannot record run ${report.run_id}: only completed reports are stored`,
    );
  }
  const kind = report.kind === "reference" ? "reference_run" : "run";
  const [entry] = await appendEntries(db, async (tx) => [
    {
      kind,
      entityId: report.run_id,
      targetId: report.target.id,
      payload: report,
    },
    ...(linked ? await linked(report, tx) : []),
  ]);
  return entry!;
}

/** Reads a completed external run report, or `null`. */
export async function readRun(
  db: TraceDb,
  runId: string,
): Promise<RunReport | null> {
  const entry = await readEntry(db, "run", runId) ??
    await readEntry(db, "reference_run", runId);
  if (!entry) return null;
  // Never present an altered row as evidence; `ledger verify` names the damage.
  if (payloadDigest(entry.payload) !== entry.payload_digest) {
    throw new LedgerIntegrityError(
      `The ledger row of run ${runId} (seq ${entry.seq}) was changed after it was written; run trace ledger verify`,
    );
  }
  return JSON.parse(entry.payload) as RunReport;
}
