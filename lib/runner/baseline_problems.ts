/**
 * What keeps a baseline from being established, problem by problem: each
 * in words (the report's `baseline.problems`, one `baseline_failed` finding
 * each, in this order) and with what it is about, so advice can name the
 * check that fits the problem rather than the guide's first one. A pure
 * function of the baseline the report keeps, so it reads old reports too.
 *
 * @module
 */

import type { Baseline, RequestErrorRecord } from "./report.ts";
import { requestDetail } from "./_session.ts";

/** One reason the baseline was not established. */
export type BaselineProblem =
  /** A baseline request gave no usable answer. */
  | { about: "request"; text: string; error: RequestErrorRecord }
  /**
   * A baseline request answered a status for a path or method the server
   * does not serve: base_url or the adapter's route is wrong (the
   * `adapterReached` check).
   */
  | { about: "no_route"; text: string; error: RequestErrorRecord }
  /** An inventory answered `complete: false`. */
  | { about: "incomplete_inventory"; text: string }
  /** A complete inventory did not count every record ingested. */
  | { about: "uncounted"; text: string }
  /** A marker query did not return the marker. */
  | { about: "unretrievable"; text: string };

/** Statuses of a server that does not serve the path or method (as lib/http words them). */
const NO_ROUTE: ReadonlySet<number> = new Set([404, 405, 501]);

/** The problems of `baseline` for a run of `documents` canaries, in report order. */
export function baselineProblems(
  baseline: Baseline,
  documents: number,
): BaselineProblem[] {
  const problems: BaselineProblem[] = baseline.errors.map((error) => ({
    about: NO_ROUTE.has(error.status ?? 0) ? "no_route" : "request",
    text: `/${error.op} (${error.namespace}) failed: ${requestDetail(error)}`,
    error,
  }));
  const inv = baseline.inventory;
  if (inv && !inv.complete) {
    problems.push({
      about: "incomplete_inventory",
      text: "test inventory answered complete: false",
    });
  }
  if (
    inv && inv.complete &&
    (inv.source_records !== documents || inv.vector_records !== documents)
  ) {
    problems.push({
      about: "uncounted",
      text:
        `test inventory counted ${inv.source_records} source and ${inv.vector_records} vector record(s); expected ${documents} of each`,
    });
  }
  if (baseline.marker_seen === false) {
    problems.push({
      about: "unretrievable",
      text: "the canary marker was not retrievable through /query",
    });
  }
  problems.push(...controlProblems(baseline));
  return problems;
}

function controlProblems(baseline: Baseline): BaselineProblem[] {
  const problems: BaselineProblem[] = [];
  const control = baseline.control_inventory;
  if (control && !control.complete) {
    problems.push({
      about: "incomplete_inventory",
      text: "control inventory answered complete: false",
    });
  }
  if (
    control && control.complete &&
    (control.source_records < 1 || control.vector_records < 1)
  ) {
    problems.push({
      about: "uncounted",
      text: "the control record was not counted in the control inventory",
    });
  }
  if (baseline.control_seen === false) {
    problems.push({
      about: "unretrievable",
      text: "the control marker was not retrievable through /query",
    });
  }
  return problems;
}
