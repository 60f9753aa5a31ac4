/**
 * The check every reader and `ledger verify` apply to a stored run: its
 * verdict must be the one its findings imply, by the runner's own rule. The
 * chain cannot catch a rewrite whose digests were all recomputed; a verdict
 * that contradicts its own findings is one.
 *
 * @module
 */

import { verdictOf } from "../runner/findings.ts";
import type { RunReport } from "../runner/report.ts";

/**
 * Why `report`'s verdict is not the one its findings imply, or `null`. Every
 * report the runner writes carries its findings: one without them (a key
 * removed to skip this check) is refused as well.
 */
export function verdictProblem(
  report: Pick<RunReport, "verdict" | "findings">,
): string | null {
  if (!Array.isArray(report.findings)) {
    return `its stored verdict is ${report.verdict} and it has no findings to imply one`;
  }
  const implied = verdictOf(report.findings);
  return implied === report.verdict
    ? null
    : `its stored verdict is ${report.verdict} but its findings imply ${implied}`;
}
