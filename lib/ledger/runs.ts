/** Completed run reports in the ledger: external and reference history kept apart. */

import type { Transaction } from "@libsql/client";
import type { TraceDb } from "../db.ts";
import { UsageError } from "../errors.ts";
import type { RunReport } from "../runner/report.ts";
import {
  appendEntries,
  type EntryKind,
  latestEntryPerTarget,
  type LedgerEntry,
  listNewestEntries,
  type NewEntry,
  readEntry,
} from "./chain.ts";
import { headAfter, type LedgerHead } from "./head.ts";
import { CHAINED_COLUMNS, verifiedEntries } from "./_intact.ts";
import { quoteValue } from "../echo.ts";
import { verdictProblem } from "./_verdict.ts";

const RUN_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** Throws a {@link UsageError} unless `runId` looks like a run id (it names files too). */
export function validateRunId(runId: string): string {
  if (!RUN_ID_PATTERN.test(runId) || runId.includes("..")) {
    throw new UsageError(
      `Invalid run id ${
        quoteValue(runId)
      }: expected e.g. run-20261129T214455Z-3f9a1c`,
    );
  }
  return runId;
}

/** True when `value` is a run id as {@link validateRunId} accepts it. */
export function isRunId(value: string): boolean {
  try {
    validateRunId(value);
    return true;
  } catch {
    return false;
  }
}

/** Entries written atomically with a run's report (e.g. the replay link). */
export type LinkedEntries = (
  report: RunReport,
  tx: Transaction,
) => Promise<NewEntry[]>;

/** A report appended to the ledger, and the ledger's head right after it (and its linked entries). */
export interface RecordedRun {
  entry: LedgerEntry;
  head: LedgerHead;
}

/**
 * Appends a finished report, completed or interrupted (external reports as
 * `run`, reference ones as `reference_run`).
 */
export async function recordRun(
  db: TraceDb,
  report: RunReport,
  linked?: LinkedEntries,
): Promise<RecordedRun> {
  if (report.state === "running" || report.finished_at === null) {
    throw new TypeError(
      `Cannot record run ${report.run_id}: only finished reports are stored`,
    );
  }
  // The ledger never stores what its readers would refuse.
  const problem = verdictProblem(report);
  if (problem !== null) {
    throw new TypeError(`Cannot record run ${report.run_id}: ${problem}`);
  }
  const kind = report.kind === "reference" ? "reference_run" : "run";
  const entries = await appendEntries(db, async (tx) => [
    {
      kind,
      entityId: report.run_id,
      targetId: report.target.id,
      payload: report,
    },
    ...(linked ? await linked(report, tx) : []),
  ]);
  return { entry: entries[0]!, head: await headAfter(db, entries.at(-1)!) };
}

/** Reads a completed report (external or reference), or `null`; refuses an altered row. */
export async function readRun(
  db: TraceDb,
  runId: string,
): Promise<RunReport | null> {
  const entry = await readEntry(db, "run", runId) ??
    await readEntry(db, "reference_run", runId);
  return entry ? JSON.parse(entry.payload) as RunReport : null;
}

/**
 * The ids of every completed run the ledger holds (external and reference),
 * read without their payloads: for telling a run the ledger has from one only
 * files know, whatever a listing's filters leave out.
 */
export async function recordedRunIds(db: TraceDb): Promise<Set<string>> {
  const rows = await db.client.execute(
    `SELECT ${CHAINED_COLUMNS} FROM ledger_entries WHERE kind IN ('run', 'reference_run')`,
  );
  const entries = await verifiedEntries(db, rows.rows, { payload: false });
  return new Set(entries.map((entry) => entry.entity_id));
}

/** Which history a run belongs to. */
export type RunKind = RunReport["kind"];

/** A completed report with its place in the ledger. */
export interface StoredRun {
  seq: number;
  run_id: string;
  target_id: string | null;
  /** When the report was appended. */
  created_at: string;
  report: RunReport;
}

function entryKindOf(kind: RunKind): EntryKind {
  return kind === "reference" ? "reference_run" : "run";
}

function storedRun(entry: LedgerEntry): StoredRun {
  return {
    seq: entry.seq,
    run_id: entry.entity_id,
    target_id: entry.target_id,
    created_at: entry.created_at,
    report: JSON.parse(entry.payload) as RunReport,
  };
}

/** Options for {@link listRuns}. */
export interface ListRunsOptions {
  /** Only runs of this target. */
  targetId?: string;
  /** Newest first, at most this many (default 50). */
  limit?: number;
}

/** Stored runs of one history, newest first; external and reference runs never mix. */
export async function listRuns(
  db: TraceDb,
  kind: RunKind,
  options: ListRunsOptions = {},
): Promise<StoredRun[]> {
  const entries = await listNewestEntries(db, entryKindOf(kind), {
    limit: options.limit ?? 50,
    ...(options.targetId === undefined ? {} : { targetId: options.targetId }),
  });
  return entries.map(storedRun);
}

/** The newest stored run of each target in one history, in ledger order. */
export async function latestRunPerTarget(
  db: TraceDb,
  kind: RunKind,
): Promise<StoredRun[]> {
  return (await latestEntryPerTarget(db, entryKindOf(kind))).map(storedRun);
}

/** One stored run of one history by id, or `null` (a run of the other history is `null` too). */
export async function readStoredRun(
  db: TraceDb,
  kind: RunKind,
  runId: string,
): Promise<StoredRun | null> {
  const entry = await readEntry(db, entryKindOf(kind), runId);
  return entry ? storedRun(entry) : null;
}

/** Filters of {@link findRuns}. */
export interface FindRunsOptions {
  /** Which histories (default both). */
  kinds?: RunKind[];
  targetId?: string;
  /** Only runs with this verdict (RUNNING: none, a stored run has finished). */
  verdict?: RunReport["verdict"] | "RUNNING";
  /** Only runs in this state. */
  state?: RunReport["state"];
  /** Newest first, at most this many. */
  limit: number;
}

/** Stored runs of both histories matching the filters, newest first; each row checked against the chain. */
export async function findRuns(
  db: TraceDb,
  options: FindRunsOptions,
): Promise<StoredRun[]> {
  const kinds = (options.kinds ?? ["external", "reference"]).map(entryKindOf);
  const where = [`kind IN (${kinds.map(() => "?").join(", ")})`];
  const args: (string | number)[] = [...kinds];
  if (options.targetId !== undefined) {
    where.push("target_id = ?");
    args.push(options.targetId);
  }
  // Filtered here, not after reading: a limit then counts matching runs only.
  for (const field of ["verdict", "state"] as const) {
    const value = options[field];
    if (value === undefined) continue;
    where.push(`json_extract(payload, '$.${field}') = ?`);
    args.push(value);
  }
  const rows = await db.client.execute({
    sql: `SELECT * FROM ledger_entries WHERE ${
      where.join(" AND ")
    } ORDER BY seq DESC LIMIT ?`,
    args: [...args, options.limit],
  });
  return (await verifiedEntries(db, rows.rows)).map(storedRun);
}
