/**
 * Expected versus observed: does a run of a reference system land where a
 * correct checker must? Verdict, required findings, the report's state, the
 * PASS qualifier (no transient residual for "immediate"; the hidden records
 * really exist for a blind spot) and, where the system states it, the cleanup
 * outcome all have to agree.
 *
 * @module
 */

import type { RunReport } from "../runner/report.ts";
import type { StoredCounts } from "../memory/mod.ts";
import {
  expectationLabel,
  type Qualifier,
  type ReferenceSystemSpec,
} from "./systems.ts";

/** How a run compares with its system's expectation. */
export interface Evaluation {
  /** The expected outcome, in words (verdict and qualifier). */
  expected: string;
  /** The observed outcome, in the same words. */
  observed: string;
  /** Whether the run landed where expected: verdict, qualifier, findings, state and cleanup. */
  matches: boolean;
  /** One line per disagreement; empty when `matches`. */
  mismatches: string[];
}

/** Finding keys of a report, as `code:subject`. */
export function findingKeys(report: RunReport): string[] {
  return report.findings.map((f) => `${f.code}:${f.subject}`);
}

/** The qualifier a report shows, given what the system is known to hide. */
export function observedQualifier(
  spec: ReferenceSystemSpec,
  report: RunReport,
): Qualifier | null {
  if (report.verdict !== "PASS") return null;
  if (spec.blind_spot !== null) return "blind_spot";
  return report.findings.some((f) => f.severity === "transient")
    ? "transient"
    : "immediate";
}

/**
 * Compares `report` with `spec.expected`. `hidden` is what the system still
 * stores after the run (known only for live runs, `null` from history).
 */
export function evaluateRun(
  spec: ReferenceSystemSpec,
  report: RunReport,
  hidden: StoredCounts | null = null,
): Evaluation {
  const expected = spec.expected;
  const qualifier = observedQualifier(spec, report);
  const mismatches: string[] = [];
  if (report.verdict !== expected.verdict) {
    mismatches.push(
      `verdict ${report.verdict}, expected ${expected.verdict}`,
    );
  } else if (expected.qualifier !== null && qualifier !== expected.qualifier) {
    mismatches.push(
      `PASS was ${qualifier ?? "unqualified"}, expected ${expected.qualifier}`,
    );
  }
  const keys = new Set(findingKeys(report));
  for (const key of expected.findings) {
    if (!keys.has(key)) mismatches.push(`missing finding ${key}`);
  }
  const state = expected.state ?? "completed";
  if (report.state !== state) {
    mismatches.push(`state ${report.state}, expected ${state}`);
  }
  const cleanup = report.cleanup.cleanup_complete;
  if (
    expected.cleanup_complete !== undefined &&
    cleanup !== expected.cleanup_complete
  ) {
    mismatches.push(
      `cleanup ${cleanupWord(cleanup)}, expected ${
        cleanupWord(expected.cleanup_complete)
      }`,
    );
  }
  if (
    expected.qualifier === "blind_spot" && hidden !== null &&
    hidden.source_records + hidden.vector_records === 0
  ) {
    mismatches.push(
      "the blind spot did not materialise: nothing stayed hidden in the system",
    );
  }
  return {
    expected: expectationLabel(expected.verdict, expected.qualifier),
    observed: expectationLabel(report.verdict, qualifier),
    matches: mismatches.length === 0,
    mismatches,
  };
}

function cleanupWord(complete: boolean): string {
  return complete ? "complete" : "incomplete";
}
