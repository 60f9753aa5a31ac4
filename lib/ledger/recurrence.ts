/**
 * Whether a replay that did not pass shows the failure its regression was
 * saved for, or failed on something else. The gate counts any non-PASS
 * replay of an enforced regression as failing either way; this only tells
 * the reader what came back, so a new failure is not read as the old bug.
 *
 * @module
 */

import type { RunReport } from "../runner/report.ts";
import { failedAssertions, type PinnedAssertion } from "./contract.ts";
import type { RegressionDefinition } from "./regressions.ts";

/** What a replay that did not pass showed of the regression's saved failure. */
export type ReplayRecurrence =
  /** The replay was INCONCLUSIVE: it cannot say whether the saved failure came back. */
  | { kind: "inconclusive" }
  /** Some of the saved failed assertions failed again (`also`: new ones besides). */
  | {
    kind: "recurred";
    recurred: PinnedAssertion[];
    also: PinnedAssertion[];
  }
  /** None of the saved failed assertions failed again; `instead` did. */
  | { kind: "other_failure"; instead: PinnedAssertion[] };

/**
 * Compares the failed assertions of `report`, a replay that did not pass,
 * with those `definition` saved; `null` for a PASS (nothing failed).
 */
export function replayRecurrence(
  definition: Pick<RegressionDefinition, "assertions">,
  report: RunReport,
): ReplayRecurrence | null {
  if (report.verdict === "PASS") return null;
  if (report.verdict === "INCONCLUSIVE") return { kind: "inconclusive" };
  const saved = new Set(definition.assertions.map(assertionName));
  const failed = failedAssertions(report);
  const recurred = failed.filter((a) => saved.has(assertionName(a)));
  const others = failed.filter((a) => !saved.has(assertionName(a)));
  return recurred.length > 0
    ? { kind: "recurred", recurred, also: others }
    : { kind: "other_failure", instead: others };
}

/** An assertion as messages name it: `residual_store:cache_records`. */
export function assertionName(assertion: PinnedAssertion): string {
  return `${assertion.code}:${assertion.subject}`;
}
