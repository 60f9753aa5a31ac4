/**
 * Reports that live in files, not in the ledger: a report kept beside its
 * checkpoint when the ledger could not take it, and a checkpoint that says
 * its run completed when neither the ledger nor a kept report has it.
 * Nothing chains a file, so a kept report is presented only when the
 * verdict rules, applied again to its own evidence, reach the verdict and
 * the findings it states; it is never presented as the ledger's record.
 *
 * @module
 */

import { canonicalJson } from "../canonical_json.ts";
import type { TraceDb } from "../db.ts";
import { RefusedError, StorageError } from "../errors.ts";
import { isRunId, recordedRunIds } from "../ledger/runs.ts";
import { join } from "node:path";
import {
  type Checkpoint,
  checkpointDir,
  checkpointRunIds,
  readCheckpoint,
} from "../runner/checkpoint.ts";
import type { RunPhase } from "../runner/events.ts";
import { assessRun } from "../runner/findings.ts";
import type { Finding, RunReport } from "../runner/report.ts";
import { keptReportPath } from "./external_run.ts";

const PHASES: readonly RunPhase[] = [
  "ingest",
  "baseline",
  "delete",
  "window",
  "cleanup",
  "done",
];

/**
 * The checkpoint of `runId` in `dataDir`, or `null` when there is none. A
 * checkpoint file is named after its run; one whose content names another
 * run (copied or renamed by hand) is refused like a damaged one, rather
 * than shown, cleaned up or judged as the run its name says.
 */
export async function readRunCheckpoint(
  dataDir: string,
  runId: string,
): Promise<Checkpoint | null> {
  const checkpoint = await readCheckpoint(dataDir, runId);
  if (checkpoint === null || checkpoint.run_id === runId) return checkpoint;
  throw new StorageError(
    `Checkpoint ${
      join(checkpointDir(dataDir), `${runId}.json`)
    } is of run ${checkpoint.run_id}, not ${runId} (copied or renamed); restore or remove it`,
  );
}

/**
 * Why `report` contradicts its own evidence, or `null` when the verdict
 * rules reach its verdict and findings again (an interrupted report may
 * have been interrupted in any phase; one of them must reproduce it).
 */
export function keptReportProblem(report: RunReport): string | null {
  const phases = report.state === "completed" ? [null] : PHASES;
  let decided: string | null = null;
  for (const phase of phases) {
    let again;
    try {
      again = assessRun({
        baseline: report.baseline,
        deletion: report.deletion,
        samples: report.samples,
        cleanup: report.cleanup,
        windowSeconds: report.timing.deletion_window_seconds,
        intervalSeconds: report.timing.sample_interval_seconds,
        interruptedDuring: phase,
      });
    } catch {
      return "it is not a report this build can read";
    }
    if (
      again.verdict === report.verdict &&
      findingKeys(again.findings) === findingKeys(report.findings)
    ) return null;
    decided ??= again.verdict;
  }
  return decided === report.verdict
    ? "its findings are not the ones its evidence gives"
    : `it says ${report.verdict}, its evidence gives ${decided}`;
}

function findingKeys(findings: readonly Finding[]): string {
  return JSON.stringify(
    findings.filter((f) => !BEYOND_EVIDENCE.has(f.code))
      .map((f) => [f.severity, f.code, f.subject]).sort(),
  );
}

/**
 * Notes that rest on what the report does not keep (the inventory's other
 * counts; a checkpoint that could not be marked completed, which the engine
 * notes after judging), so its evidence cannot give them again: a note
 * decides nothing.
 */
const BEYOND_EVIDENCE: ReadonlySet<string> = new Set([
  "unread_inventory_count",
  "checkpoint_unwritten",
]);

/**
 * The report kept beside `checkpoint` in `dataDir`, or `null` when none was
 * kept. One that does not parse, contradicts its own evidence, or differs
 * from its checkpoint (run, target, config, start, namespaces, issued ids,
 * markers, verdict) is refused.
 */
export async function readKeptReport(
  dataDir: string,
  checkpoint: Checkpoint,
): Promise<{ report: RunReport; path: string } | null> {
  const runId = checkpoint.run_id;
  const path = keptReportPath(dataDir, runId);
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
  let report: RunReport;
  try {
    report = JSON.parse(text) as RunReport;
  } catch {
    throw keptRefusal(runId, path, "it is not valid JSON");
  }
  const problem = checkpointMismatch(report, checkpoint) ??
    keptReportProblem(report);
  if (problem) throw keptRefusal(runId, path, problem);
  return { report, path };
}

/** Where `report` differs from the checkpoint its run wrote, or `null`. */
function checkpointMismatch(
  report: RunReport,
  checkpoint: Checkpoint,
): string | null {
  if (typeof report !== "object" || report === null) {
    return "it is not a report this build can read";
  }
  // Both sides come from JSON: nothing canonicalJson could refuse.
  const same = (a: unknown, b: unknown) =>
    canonicalJson(a ?? null) === canonicalJson(b ?? null);
  const fields: [string, unknown, unknown][] = [
    ["run id", report.run_id, checkpoint.run_id],
    ["target", report.target?.id, checkpoint.target.id],
    ["config digest", report.config_digest, checkpoint.config_digest],
    ["start time", report.started_at, checkpoint.started_at],
    ["namespaces", report.namespaces, checkpoint.namespaces],
    ["issued ids", report.issued, checkpoint.issued],
    // A later cleanup queries the kept report's markers: edited ones would
    // read as no longer retrievable.
    ["markers", report.markers, checkpoint.markers],
    ["verdict", report.verdict, checkpoint.verdict],
  ];
  const differ = fields.filter(([, a, b]) => !same(a, b));
  if (differ.length === 0) return null;
  const verdict = differ.find(([name]) => name === "verdict");
  return verdict
    ? `it says ${String(report.verdict)}, its checkpoint says ${
      String(checkpoint.verdict)
    }`
    : `its ${
      differ.map(([name]) => name).join(", ")
    } differ from its checkpoint`;
}

function keptRefusal(runId: string, path: string, problem: string): Error {
  return new RefusedError(
    `The report kept for run ${runId} at ${path} cannot be trusted: ${problem} (changed after the run); the ledger has no record of this run, so its checkpoint is all that is known`,
  );
}

/** What a reader says of a run whose report is kept in a file. */
export function keptNote(path: string): string {
  return `this run is not in the ledger: its report is kept at ${path}, where Trace writes one only when the ledger cannot take it; a file is not verified like a ledger entry`;
}

/**
 * What a reader says of a run whose checkpoint says it completed while
 * neither the ledger nor a kept report has its report.
 */
export function lostNote(runId: string, verdict: string | null): string {
  return `its checkpoint says this run completed${
    verdict ? ` with ${verdict}` : ""
  }, but neither the ledger nor a kept report holds its report: entries may have been removed from the ledger (run trace ledger verify, with --expect-head HEAD if you kept one), or the process stopped before recording it; the verdict shown for ${runId} comes from the checkpoint alone`;
}

/** A completed run the ledger does not hold. */
export interface UnrecordedRun {
  run_id: string;
  target_id: string;
  /** The verdict its checkpoint recorded. */
  verdict: string | null;
  /** Whether a report was kept beside the checkpoint. */
  kept: boolean;
}

/** What the checkpoints of a data directory say the ledger lacks. */
export interface Unrecorded {
  /** Completed runs the ledger has no entry for. */
  runs: UnrecordedRun[];
  /** The checkpoints of runs that never completed (running now, or stopped), which the ledger has no entry for. */
  unfinished: Checkpoint[];
  /** Checkpoints that cannot be read: whether their run completed is unknown. */
  unreadable: string[];
}

/**
 * Completed runs (of `targetId`, else of every target) whose checkpoint in
 * `dataDir` says they finished while the ledger has no entry for them: a
 * ledger write that failed, a process that stopped before recording, or
 * entries removed from the ledger. A judgement made without them would
 * judge less than what ran; so would one that skipped a checkpoint it
 * cannot read. Runs that never completed come back apart, with their
 * checkpoints: a replay among them may be its regression's latest.
 */
export async function unrecordedRuns(
  db: TraceDb,
  dataDir: string,
  targetId?: string,
): Promise<Unrecorded> {
  const runs: UnrecordedRun[] = [];
  const unfinished: Checkpoint[] = [];
  const unreadable: string[] = [];
  const recorded = await recordedRunIds(db);
  for (const runId of await runCheckpointIds(dataDir)) {
    const checkpoint = await readRunCheckpoint(dataDir, runId).catch(() => {
      unreadable.push(join(checkpointDir(dataDir), `${runId}.json`));
      return null;
    });
    if (checkpoint === null || recorded.has(checkpoint.run_id)) continue;
    if (targetId !== undefined && checkpoint.target.id !== targetId) continue;
    if (checkpoint.state !== "completed") {
      unfinished.push(checkpoint);
      continue;
    }
    runs.push({
      run_id: checkpoint.run_id,
      target_id: checkpoint.target.id,
      verdict: checkpoint.verdict,
      kept: await exists(keptReportPath(dataDir, checkpoint.run_id)),
    });
  }
  runs.sort((a, b) => a.run_id.localeCompare(b.run_id));
  return { runs, unfinished, unreadable: unreadable.sort() };
}

/** Ids of the checkpoint files in `dataDir` that name runs as the ledger does. */
export async function runCheckpointIds(dataDir: string): Promise<string[]> {
  return (await checkpointRunIds(dataDir)).filter(isRunId);
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch {
    return false;
  }
}
