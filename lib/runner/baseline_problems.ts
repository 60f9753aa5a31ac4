/**
 * What keeps a baseline from being established, problem by problem: each
 * in words (the report's `baseline.problems`, one `baseline_failed` finding
 * each, in this order) and with what it is about, so advice can name the
 * check that fits the problem rather than the guide's first one. A pure
 * function of the baseline the report keeps, so it reads old reports too.
 *
 * @module
 */

import { notAJsonObject, type RequestFailure } from "../contract/protocol.ts";
import type { Baseline, RequestErrorRecord } from "./report.ts";
import { requestDetail } from "./_request_errors.ts";

/** One reason the baseline was not established. */
export type BaselineProblem =
  /** A baseline request (an ingest included) gave no usable answer. */
  | { about: "request"; text: string; error: RequestErrorRecord }
  /**
   * A baseline request answered a status for a path or method the server
   * does not serve, or an ingest found no adapter (no connection, no TLS,
   * a redirect, an answer that is not JSON): base_url or the adapter's
   * route is wrong (the `adapterReached` check).
   */
  | { about: "no_route"; text: string; error: RequestErrorRecord }
  /** An ingest answered an id other than the one it was sent. */
  | { about: "ingest_id"; text: string }
  /** The checkpoint could not be written before an ingest. */
  | { about: "checkpoint"; text: string }
  /** An inventory answered `complete: false`. */
  | { about: "incomplete_inventory"; text: string }
  /** A complete inventory did not count every record ingested. */
  | { about: "uncounted"; text: string }
  /**
   * A complete inventory counted more records than were ingested in a
   * store: no delay in making them visible explains that, only counting
   * beyond the namespace or a document more than once.
   */
  | { about: "overcounted"; text: string }
  /** A marker query did not return the marker. */
  | { about: "unretrievable"; text: string };

/** Statuses of a server that does not serve the path or method (as lib/http words them). */
const NO_ROUTE: ReadonlySet<number> = new Set([404, 405, 501]);

/**
 * Failures of an ingest that say no adapter answered it: the run's first
 * requests found nothing at base_url, or something other than an adapter
 * (which answers no JSON object at all: see {@link reachedNoRoute}).
 */
const NO_ADAPTER: ReadonlySet<RequestFailure> = new Set([
  "connect",
  "tls",
  "redirect",
]);

/** How the report words an ingest that stopped the run before its baseline. */
export const INGEST_FAILED = "ingest failed: ";

const ID_NOT_PRESERVED = "/ingest answered a different id for ";
const CHECKPOINT_UNWRITTEN = "the checkpoint ";

/** Why ingest stopped: an ingest answered another id than `id`. */
export function idNotPreserved(id: string): string {
  return `${ID_NOT_PRESERVED}"${id}": supplied ids must be preserved`;
}

/** Why ingest stopped: the checkpoint at `location` could not be written. */
export function checkpointUnwritten(location: string, why: string): string {
  return `${CHECKPOINT_UNWRITTEN}${location} could not be written (${why}), so no further id was issued`;
}

/** The problems of `baseline` for a run of `documents` canaries, in report order. */
export function baselineProblems(
  baseline: Baseline,
  documents: number,
): BaselineProblem[] {
  const stopped = ingestStop(baseline);
  if (stopped) return [stopped];
  const problems: BaselineProblem[] = baseline.errors.map((error) => ({
    about: reachedNoRoute(error) ? "no_route" : "request",
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
      about: inv.source_records > documents || inv.vector_records > documents
        ? "overcounted"
        : "uncounted",
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

function reachedNoRoute(error: RequestErrorRecord): boolean {
  if (NO_ROUTE.has(error.status ?? 0)) return true;
  if (error.op !== "ingest") return false;
  // A repeated key or a compressed body is an adapter answering badly.
  return NO_ADAPTER.has(error.failure) ||
    (error.failure === "malformed_json" &&
      notAJsonObject(requestDetail(error)));
}

/**
 * An ingest that stopped the run for another reason than its request's
 * failure (which `errors` holds): read back from the report's own words,
 * which this module writes, so it reads old reports too.
 */
function ingestStop(baseline: Baseline): BaselineProblem | null {
  if (baseline.errors.length > 0) return null;
  const text = baseline.problems[0];
  if (!text?.startsWith(INGEST_FAILED)) return null;
  const why = text.slice(INGEST_FAILED.length);
  if (why.startsWith(ID_NOT_PRESERVED)) return { about: "ingest_id", text };
  if (why.startsWith(CHECKPOINT_UNWRITTEN)) {
    return { about: "checkpoint", text };
  }
  return null;
}
