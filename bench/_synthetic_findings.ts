/**
 * Findings for a synthetic run copied from a real report under another
 * verdict: the ledger's readers refuse a report whose verdict is not the one
 * its findings imply, so a copy relabelled FAIL or INCONCLUSIVE carries a
 * finding that decides it, and a copy relabelled PASS keeps no deciding one.
 *
 * @module
 */

import type { Finding, Verdict } from "../lib/runner/report.ts";

/** `template`'s findings that decide nothing, plus one that decides `verdict`. */
export function findingsFor(
  template: readonly Finding[],
  verdict: Verdict,
): Finding[] {
  const kept = template.filter((f) =>
    f.severity !== "fail" && f.severity !== "inconclusive"
  );
  if (verdict === "FAIL") {
    return [...kept, {
      severity: "fail",
      code: "marker_retrievable",
      subject: "retrieval",
      message: "A deleted canary's marker was still retrievable.",
      sample_indexes: [],
    }];
  }
  if (verdict === "INCONCLUSIVE") {
    return [...kept, {
      severity: "inconclusive",
      code: "request_error",
      subject: "observation",
      message: "A sample's requests failed.",
      sample_indexes: [],
    }];
  }
  return kept;
}
