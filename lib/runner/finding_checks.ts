/**
 * A finding's checks in the order its run's evidence points at them. The
 * guide lists what to look at for a code; the report says which of those
 * fits this run: a store that read 0 after the deletion and came back was
 * restored, not left undeleted (also when it then flickered on and off); a baseline the inventory could not vouch
 * for is an inventory matter, not an ingest one. It only reorders (and
 * never drops) the guide's checks, so it claims nothing the report does not
 * show.
 *
 * @module
 */

import { notAJsonObjectKind } from "../contract/protocol.ts";
import { baselineProblems } from "./baseline_problems.ts";
import type {
  Finding,
  RequestErrorRecord,
  RunReport,
  Sample,
} from "./report.ts";
import { requestDetail, unreadCause } from "./_request_errors.ts";
import { failedFromFirst } from "./_operation_answers.ts";
import type { FindingCode } from "./rules.ts";
import { EVIDENCE_CHECKS, findingGuide } from "./finding_guide.ts";
import { continuedSentence } from "../words.ts";

/** Codes whose guide names something to check in the application when they leave a run INCONCLUSIVE. */
const GUIDED_INCONCLUSIVE: ReadonlySet<string> = new Set([
  "baseline_failed",
  "delete_unacknowledged",
  "request_error",
  "inventory_incomplete",
  "control_inventory_incomplete",
  "control_lost",
  "control_grew",
  "interrupted",
  "intermittent_residual",
  "window_end_unobserved",
]);

/**
 * What a run's reader should check in the application first, one sentence
 * each: for a FAIL the lead check of each failing subject ("Check that …"),
 * for an INCONCLUSIVE run the lead check of the finding that decided it
 * ("Check: …"), when its guide names one; nothing for a PASS.
 */
export function checkAdvice(report: RunReport): string[] {
  if (report.verdict === "FAIL") {
    const subjects = new Set<string>();
    const advice: string[] = [];
    for (const f of report.findings) {
      if (f.severity !== "fail" || subjects.has(f.subject)) continue;
      subjects.add(f.subject);
      const check = findingChecks(f, report)[0];
      if (check) advice.push(`Check that ${check}.`);
    }
    return advice;
  }
  if (report.verdict !== "INCONCLUSIVE") return [];
  // An interrupted run's request errors are the interrupt's (requests called
  // off), not the adapter's: the interrupt is what to act on.
  const first =
    (report.state === "interrupted"
      ? report.findings.find((f) => f.code === "interrupted")
      : undefined) ??
      report.findings.find((f) => f.severity === "inconclusive");
  const check = first && GUIDED_INCONCLUSIVE.has(first.code)
    ? findingChecks(first, report)[0]
    : undefined;
  return check ? [`Check: ${continuedSentence(check)}`] : [];
}

/**
 * A report's "What to check" as every reader shows it: {@link checkAdvice},
 * none for a reference run, whose system's outcome is known.
 */
export function whatToCheck(report: RunReport): string[] {
  return report.kind === "reference" ? [] : checkAdvice(report);
}

/** The checks of `finding` (one of `report`'s), the one its evidence points at first. */
export function findingChecks(finding: Finding, report: RunReport): string[] {
  const checks = findingGuide(finding.code as FindingCode, finding.subject)
    .checks;
  const lead = leadCheck(finding, report);
  return lead === null ? checks : [lead, ...checks.filter((c) => c !== lead)];
}

function leadCheck(finding: Finding, report: RunReport): string | null {
  switch (finding.code) {
    case "residual_store":
    case "marker_retrievable":
      return residualLead(finding.subject, report.samples);
    case "intermittent_residual":
      // It read 0 and came back: something restores or still serves it.
      return restoredCheck(finding.subject);
    case "baseline_failed":
      return baselineLead(finding, report);
    case "request_error": {
      const first = report.samples.flatMap((s) => s.errors)[0];
      return first ? errorLead(first, report) : null;
    }
    case "interrupted":
      // Nothing is left to remove: what remains to do is a run to its end.
      return report.cleanup.cleanup_complete ? EVIDENCE_CHECKS.rerun : null;
    default:
      return null;
  }
}

/**
 * Data left at the final sample: came back after reading 0, or (the marker)
 * outside the test answer's text, or beside a full cache.
 */
function residualLead(subject: string, samples: Sample[]): string | null {
  if (cameBack(samples.map((s) => reading(s, subject)))) {
    return restoredCheck(subject);
  }
  const place = samples.at(-1)?.marker_found_in;
  if (
    subject === "retrieval" && place &&
    (place.query !== "test" || place.field !== "text")
  ) return EVIDENCE_CHECKS.answerElsewhere;
  const cached = samples.at(-1)?.inventory?.cache_records ?? 0;
  // Seen while the cache read 0: the query path itself retrieves it (a
  // tombstoned record search still reads), whatever the cache holds later.
  const seenUncached = samples.some((s) =>
    s.marker_seen === true && s.inventory?.cache_records === 0
  );
  return subject === "retrieval" && cached > 0 && !seenUncached
    ? EVIDENCE_CHECKS.cachedAnswer
    : null;
}

/** The check about data that something brings back, for `subject`'s store or the query path. */
function restoredCheck(subject: string): string | null {
  const restored = EVIDENCE_CHECKS.restored;
  return Object.hasOwn(restored, subject)
    ? restored[subject as keyof typeof restored]
    : null;
}

/** A store's count, or 1/0 for whether the marker was retrievable; `null` when not read. */
function reading(sample: Sample, subject: string): number | null {
  if (subject === "retrieval") {
    return sample.marker_seen === null ? null : sample.marker_seen ? 1 : 0;
  }
  const inventory = sample.inventory as Record<string, unknown> | null;
  const count = inventory?.[subject];
  return typeof count === "number" ? count : null;
}

/** Read 0 at some sample and was back above 0 at the final one (as the finding's message says). */
function cameBack(values: (number | null)[]): boolean {
  const final = values.at(-1);
  return typeof final === "number" && final > 0 &&
    values.slice(0, -1).includes(0);
}

/** The baseline problem this finding states (findings follow the problems, one each, in order). */
function baselineLead(finding: Finding, report: RunReport): string | null {
  const index = report.findings
    .filter((f) => f.code === "baseline_failed")
    .indexOf(finding);
  const problem =
    baselineProblems(report.baseline, report.timing.document_count)[index];
  // A report from before ingest errors were kept names no problem: the
  // guide's order stands, which leads with base_url and the adapter.
  switch (problem?.about) {
    case "request":
      return errorLead(problem.error, report);
    case "no_route":
      return EVIDENCE_CHECKS.adapterReached;
    case "ingest_id":
      return EVIDENCE_CHECKS.idsPreserved;
    case "checkpoint":
      return EVIDENCE_CHECKS.checkpointWritable;
    case "incomplete_inventory":
      return EVIDENCE_CHECKS.inventoryComplete;
    case "uncounted":
      return EVIDENCE_CHECKS.ingestVisible;
    case "overcounted":
      return EVIDENCE_CHECKS.countedOnce;
    case "unretrievable":
      return EVIDENCE_CHECKS.queryRetrieves;
    default:
      return null;
  }
}

/**
 * The check a request error of `report` points at: a refused token as
 * such, an answer not read after it arrived by why it was not, an
 * operation that never worked by its own handler, any other by its class
 * of failure.
 */
function errorLead(
  error: RequestErrorRecord,
  report: RunReport,
): string | null {
  if (error.status === 401 || error.status === 403) {
    return EVIDENCE_CHECKS.tokenAccepted;
  }
  switch (unreadCause(error)) {
    case "echoed_token":
      return EVIDENCE_CHECKS.tokenNotEchoed;
    case "search":
      return EVIDENCE_CHECKS.searchableAnswers;
    default:
      return error.op !== "ingest" && failedFromFirst(report, error.op)
        ? EVIDENCE_CHECKS.failingHandler[error.op]
        : failureLead(error);
  }
}

/** The check about a request's class of failure; `null` for a class no check names. */
function failureLead(error: RequestErrorRecord): string | null {
  switch (error.failure) {
    case "timeout":
      return EVIDENCE_CHECKS.timeout;
    case "schema":
      return EVIDENCE_CHECKS.contractFields;
    case "malformed_json":
      // JSON of another type (an array for an object) has no syntax to fix:
      // its shape is what breaks the contract.
      return notAJsonObjectKind(requestDetail(error)) === "type"
        ? EVIDENCE_CHECKS.contractFields
        : EVIDENCE_CHECKS.malformed;
    case "too_large":
    case "framing":
      return EVIDENCE_CHECKS.malformed;
    case "connect":
    case "http_status":
      return EVIDENCE_CHECKS.unavailable;
    case "tls":
    case "redirect":
      // An answer from something other than the adapter: a certificate or
      // a login redirect in front of it.
      return EVIDENCE_CHECKS.adapterReached;
    default:
      return null;
  }
}
