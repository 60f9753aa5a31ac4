/**
 * Before/after comparison of two completed runs of one target under one
 * contract: both verdicts, findings fixed / still present / new, and both
 * cleanup outcomes. A passing replay used fresh synthetic data, so it says
 * nothing about records an earlier run leaked; the comparison says so.
 *
 * @module
 */

import { RefusedError } from "../errors.ts";
import type { Cleanup, RunReport, Verdict } from "../runner/report.ts";
import {
  type CleanupRecord,
  type LaterCleanup,
  laterCleanupOf,
} from "./cleanups.ts";
import {
  contractDifferences,
  type RunContract,
  runContract,
} from "./contract.ts";

/** A finding identity used to match findings across runs. */
export interface FindingKey {
  /** The finding's stable code. */
  code: string;
  /** The store or check it is about. */
  subject: string;
  /** Only failing and inconclusive findings are compared. */
  severity: "fail" | "inconclusive";
  /** The finding's sentence, from the run it is listed for. */
  message: string;
}

/** One side of a comparison. */
export interface ComparedRun {
  /** The run. */
  run_id: string;
  /** Its verdict. */
  verdict: Verdict;
  /** When it started, ISO 8601. */
  started_at: string;
  /** Its namespaces: each run uses fresh ones. */
  namespaces: { test: string; control: string };
}

/** One side's cleanup outcome. */
export interface ComparedCleanup {
  /** Whether the run's cleanup left nothing. */
  cleanup_complete: boolean;
  /** The last inventories of its namespaces. */
  remaining: Cleanup["remaining"];
  /** What it left, in words. */
  problems: string[];
  /** The latest `external-cleanup` of the run, `null` when none ran. */
  later_cleanup: LaterCleanup | null;
}

/** Options for {@link compareRuns}. */
export interface CompareOptions {
  /** The latest `external-cleanup` of each run, as the ledger's cleanup entries hold them. */
  laterCleanups?: { a: CleanupRecord | null; b: CleanupRecord | null };
  /** Whether the runs' target is registered (default `null`: not asked). */
  targetRegistered?: boolean | null;
}

/** The answer of `external-compare`. */
export interface RunComparison {
  /** Format identifier. */
  schema: "trace.comparison/1";
  /** The target both runs are about. */
  target_id: string;
  /**
   * Whether that target is registered, so that `external-cleanup` can
   * reach its adapter (`false`: config runs never registered); `null`
   * when not asked.
   */
  target_registered: boolean | null;
  /** The contract both ran under. */
  contract: RunContract;
  /** The first run, the one before. */
  a: ComparedRun;
  /** The second run, the one after. */
  b: ComparedRun;
  /** Failing and inconclusive findings of `a` gone in `b`, in both, and new in `b`. */
  findings: {
    fixed: FindingKey[];
    still_present: FindingKey[];
    new: FindingKey[];
  };
  /** Both cleanup outcomes. */
  cleanup: { a: ComparedCleanup; b: ComparedCleanup };
  /** Plain statement of what a passing later run does not prove. */
  caveat: string;
}

/** The caveat every comparison carries. */
export const REPLAY_CAVEAT =
  "A later run uses fresh synthetic data: a PASS does not prove that records left behind by the earlier run were cleaned up, nor that a fix was deployed everywhere. Inspect and remove old residuals separately.";

/** Compares two completed runs; refuses different targets, configs or contracts. */
export function compareRuns(
  a: RunReport,
  b: RunReport,
  options: CompareOptions = {},
): RunComparison {
  const refuse = (why: string) =>
    new RefusedError(
      `Cannot compare ${a.run_id} with ${b.run_id}: ${why}`,
    );
  if (a.run_id === b.run_id) {
    throw refuse(
      `it is the same run; compare it with another run of its target (trace external-runs --target ${a.target.id} lists them)`,
    );
  }
  if (a.target.id !== b.target.id) {
    throw refuse(
      `they ran against different targets ("${a.target.id}" and "${b.target.id}")`,
    );
  }
  if (a.config_digest !== b.config_digest) {
    throw refuse("they ran with different target configs");
  }
  const contract = runContract(a);
  const fields = contractDifferences(contract, runContract(b));
  if (fields.length > 0) {
    throw refuse(`they ran under different contracts (${fields.join(", ")})`);
  }
  const before = problemKeys(a);
  const after = problemKeys(b);
  return {
    schema: "trace.comparison/1",
    target_id: a.target.id,
    target_registered: options.targetRegistered ?? null,
    contract,
    a: side(a),
    b: side(b),
    findings: {
      fixed: [...before.entries()].filter(([k]) => !after.has(k)).map(([, f]) =>
        f
      ),
      still_present: [...after.entries()].filter(([k]) => before.has(k)).map((
        [, f],
      ) => f),
      new: [...after.entries()].filter(([k]) => !before.has(k)).map(([, f]) =>
        f
      ),
    },
    cleanup: {
      a: cleanupOf(a, options.laterCleanups?.a ?? null),
      b: cleanupOf(b, options.laterCleanups?.b ?? null),
    },
    caveat: REPLAY_CAVEAT,
  };
}

function problemKeys(report: RunReport): Map<string, FindingKey> {
  const keys = new Map<string, FindingKey>();
  for (const f of report.findings) {
    if (f.severity !== "fail" && f.severity !== "inconclusive") continue;
    keys.set(`${f.severity}:${f.code}:${f.subject}`, {
      code: f.code,
      subject: f.subject,
      severity: f.severity,
      message: f.message,
    });
  }
  return keys;
}

function side(report: RunReport): ComparedRun {
  return {
    run_id: report.run_id,
    verdict: report.verdict,
    started_at: report.started_at,
    namespaces: report.namespaces,
  };
}

function cleanupOf(
  report: RunReport,
  later: CleanupRecord | null,
): ComparedCleanup {
  return {
    cleanup_complete: report.cleanup.cleanup_complete,
    remaining: report.cleanup.remaining,
    problems: report.cleanup.problems,
    later_cleanup: later && laterCleanupOf(later),
  };
}
