/**
 * Assertion families: the verdict of a run broken down into the checks CI
 * systems show as test cases (baseline, deletion per store, retrieval,
 * control, cleanup). Derived from a report's findings; never re-judged.
 *
 * @module
 */

import { STORES } from "../contract/protocol.ts";
import type { Finding, RunReport } from "./report.ts";

/** Every assertion family, in report order. */
export const ASSERTION_FAMILIES = [
  "baseline",
  ...STORES.map((store) => `deletion.${store}` as const),
  "retrieval",
  "control",
  "cleanup",
] as const;

/** One of {@link ASSERTION_FAMILIES}. */
export type AssertionFamily = typeof ASSERTION_FAMILIES[number];

/**
 * Outcome of one family: `error` is the INCONCLUSIVE case; `incomplete` is a
 * cleanup that did not finish after a run that had already failed (or was
 * inconclusive for another reason), which is a problem but not the reason
 * for the verdict.
 */
export type FamilyStatus = "pass" | "fail" | "error" | "incomplete";

/** One family's outcome with the finding messages behind it. */
export interface FamilyResult {
  family: AssertionFamily;
  status: FamilyStatus;
  /** Messages of failing or inconclusive findings (the evidence). */
  problems: string[];
  /** Transient residuals and other notes that did not change the status. */
  notes: string[];
}

/** Families judged from window samples. */
const SAMPLE_FAMILIES: readonly AssertionFamily[] = [
  ...STORES.map((store) => `deletion.${store}` as const),
  "retrieval",
  "control",
];

/** The family a finding subject belongs to; cross-cutting subjects map to every sampled family. */
export function familiesOf(subject: string): readonly AssertionFamily[] {
  if (subject === "baseline" || subject === "retrieval") return [subject];
  if (subject === "control" || subject === "cleanup") return [subject];
  if ((STORES as readonly string[]).includes(subject)) {
    return [`deletion.${subject}` as AssertionFamily];
  }
  return SAMPLE_FAMILIES;
}

/** Breaks a report down into one result per assertion family. */
export function familyResults(report: RunReport): FamilyResult[] {
  const results = new Map<AssertionFamily, FamilyResult>(
    ASSERTION_FAMILIES.map((
      family,
    ) => [family, { family, status: "pass", problems: [], notes: [] }]),
  );
  // A finished report of an interrupted window is judged by its findings (which
  // mark every sampled family INCONCLUSIVE); only a run without one is unknown.
  if (report.state === "running" || report.finished_at === null) {
    for (const result of results.values()) {
      markError(result, `the run is ${report.state}: it never completed`);
    }
    return [...results.values()];
  }
  for (const finding of report.findings) applyFinding(results, finding);
  if (report.samples.length === 0) {
    for (const family of SAMPLE_FAMILIES) {
      const result = results.get(family)!;
      if (result.status === "pass") {
        markError(
          result,
          "not evaluated: no sample was taken because the baseline was not established or the deletion was not acknowledged",
        );
      }
    }
  }
  const cleanup = results.get("cleanup")!;
  if (!report.cleanup.cleanup_complete && cleanup.status === "pass") {
    markIncomplete(
      cleanup,
      `Cleanup did not complete: ${
        report.cleanup.problems.join("; ") || "synthetic records remain"
      }`,
    );
  }
  return [...results.values()];
}

function applyFinding(
  results: Map<AssertionFamily, FamilyResult>,
  finding: Finding,
): void {
  for (const family of familiesOf(finding.subject)) {
    const result = results.get(family)!;
    if (finding.severity === "fail") {
      result.status = "fail";
      result.problems.push(finding.message);
    } else if (finding.severity === "inconclusive") {
      markError(result, finding.message);
    } else if (finding.severity === "transient") {
      result.notes.push(finding.message);
    } else if (finding.code === "cleanup_incomplete") {
      // A note: the verdict already is FAIL or INCONCLUSIVE for another reason.
      markIncomplete(result, finding.message);
    } else if (
      finding.code === "unread_inventory_count" &&
      result.family.startsWith("deletion.")
    ) {
      // A store the counts leave out: the per-store checks passed without it.
      result.notes.push(finding.message);
    }
  }
}

function markError(result: FamilyResult, message: string): void {
  if (result.status !== "fail") result.status = "error";
  result.problems.push(message);
}

function markIncomplete(result: FamilyResult, message: string): void {
  if (result.status === "pass") result.status = "incomplete";
  result.problems.push(message);
}
