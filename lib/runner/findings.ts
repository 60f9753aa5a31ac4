/**
 * The verdict rules, assembled into a verdict. Every code they emit is
 * declared in `rules.ts` under the rules revision. Data left at the final sample is FAIL; a run
 * interrupted before its final sample has none, so it is INCONCLUSIVE
 * whatever its last sample showed; a failed baseline, a missing
 * observation, a request error, an incomplete inventory, a lost control
 * or a control namespace that grew after the deletion is INCONCLUSIVE; so is data that went away on a clean ending too thin to
 * show it: one that came back before after as many clean reads, or a first
 * clean read that came more than an interval after the window's end;
 * otherwise PASS, with transient residuals recorded. A
 * marker seen in a rendered spelling is retrieval evidence like an exact
 * one. Cleanup failure turns PASS into INCONCLUSIVE; FAIL stays FAIL.
 * Counts the test inventory answered beside the contract's are a note:
 * Trace cannot judge a store it is not told is one, nor ignore it silently.
 * The residual rules (`_residual_rules.ts`), the interrupted finding
 * (`_interrupted_finding.ts`) and the observation findings
 * (`_observation_findings.ts`) each have a module of their own.
 *
 * @module
 */

import { joinAnd } from "../words.ts";
import { finding, secondsLabel } from "./_finding.ts";
import { interruptedFinding } from "./_interrupted_finding.ts";
import {
  controlFindings,
  observationFindings,
} from "./_observation_findings.ts";
import { residualFindings } from "./_residual_rules.ts";
import type { RunPhase } from "./events.ts";
import type { ReadingPlace, UnreadCounts } from "./unread_counts.ts";
import type {
  Baseline,
  Cleanup,
  DeletionRecord,
  Finding,
  Sample,
  Verdict,
} from "./report.ts";

/** Everything the verdict depends on. */
export interface AssessmentInput {
  baseline: Baseline;
  deletion: DeletionRecord | null;
  samples: Sample[];
  cleanup: Cleanup;
  windowSeconds: number;
  /** The configured seconds between samples: how closely the window's end had to be read. */
  intervalSeconds: number;
  /** Phase during which the run was interrupted, or null. */
  interruptedDuring: RunPhase | null;
  /**
   * Counts the test inventory answered beside the contract's four, which
   * the report does not keep; absent when judging a report again.
   */
  unreadCounts?: UnreadCounts | null;
}

/** Verdict and the findings that justify it. */
export interface Assessment {
  verdict: Verdict;
  findings: Finding[];
}

/** Applies the verdict rules to a run's evidence. */
export function assessRun(input: AssessmentInput): Assessment {
  const findings: Finding[] = [];
  if (!input.baseline.ok) {
    for (const problem of input.baseline.problems) {
      findings.push(
        finding({
          severity: "inconclusive",
          code: "baseline_failed",
          subject: "baseline",
          message: `Baseline not established: ${problem}`,
          samples: [],
        }),
      );
    }
  }
  if (input.deletion && !input.deletion.acknowledged) {
    const why = input.deletion.error?.message ?? "no acknowledgement";
    findings.push(
      finding({
        severity: "inconclusive",
        code: "delete_unacknowledged",
        subject: "deletion",
        message: `The deletion was not acknowledged: ${why}`,
        samples: [],
      }),
    );
  }
  if (input.samples.length > 0) {
    // Without a final sample there is nothing to judge residuals against.
    if (input.interruptedDuring === null) {
      findings.push(...residualFindings(input.samples, input));
    }
    findings.push(...observationFindings(input.samples));
    findings.push(
      ...controlFindings(input.samples, input.baseline.control_inventory),
    );
  }
  if (input.interruptedDuring !== null) {
    findings.push(interruptedFinding(input));
  }
  const verdictBeforeCleanup = verdictOf(findings);
  findings.push(...cleanupFindings(input.cleanup, verdictBeforeCleanup));
  if (input.unreadCounts) {
    findings.push(unreadCountFinding(input.unreadCounts, input));
  }
  const verdict = verdictOf(findings);
  if (verdict === "PASS") findings.push(cleanPassFinding(input.samples));
  return { verdict, findings };
}

/**
 * The verdict `findings` imply: the one rule {@link assessRun} applies, and
 * readers apply again to a stored report to catch a rewritten verdict.
 */
export function verdictOf(findings: readonly Finding[]): Verdict {
  if (findings.some((f) => f.severity === "fail")) return "FAIL";
  if (findings.some((f) => f.severity === "inconclusive")) {
    return "INCONCLUSIVE";
  }
  return "PASS";
}

function cleanupFindings(cleanup: Cleanup, verdict: Verdict): Finding[] {
  if (cleanup.cleanup_complete) return [];
  const detail = cleanup.problems.join("; ") || "synthetic records remain";
  if (verdict === "PASS") {
    return [
      finding({
        severity: "inconclusive",
        code: "cleanup_incomplete",
        subject: "cleanup",
        message: `Cleanup did not complete: ${detail}`,
        samples: [],
      }),
    ];
  }
  return [
    finding({
      severity: "note",
      code: "cleanup_incomplete",
      subject: "cleanup",
      message: `Cleanup did not complete: ${detail}`,
      samples: [],
    }),
  ];
}

/** Most keys an unread-count note names; the rest are counted. */
const MAX_NAMED_KEYS = 5;

/**
 * The test inventory answered counts Trace does not read: name the keys
 * that are field names (each with the count of the reading that speaks for
 * it) and count the others, whose names may be values.
 */
function unreadCountFinding(
  unread: UnreadCounts,
  input: AssessmentInput,
): Finding {
  const named = unread.named.slice(0, MAX_NAMED_KEYS).map((entry) =>
    `${entry.key} (${entry.count} ${readingLabel(entry.at, input)})`
  );
  const others = unread.unnamed + unread.named.length - named.length;
  const keys = others === 1 ? "key" : "keys";
  const what = named.length === 0
    ? `counts under ${others} ${keys} that are not field names`
    : joinAnd(others > 0 ? [...named, `${others} other ${keys}`] : named);
  return finding({
    severity: "note",
    code: "unread_inventory_count",
    subject: "inventory",
    message:
      `The test inventory also answered ${what}, which Trace does not count: count every store of your application in source_records, vector_records or cache_records, or Trace cannot see what it keeps`,
    samples: unread.samples,
  });
}

/** "at the final sample", "at sample #2 (1.00 s)", "at the baseline", "at cleanup". */
function readingLabel(at: ReadingPlace, input: AssessmentInput): string {
  if (at.phase === "baseline") return "at the baseline";
  if (at.phase === "cleanup") return "at cleanup";
  const sample = input.samples[at.sample];
  if (!sample) return `at sample #${at.sample}`;
  const final = input.interruptedDuring === null &&
    sample === input.samples.at(-1);
  return final
    ? "at the final sample"
    : `at sample #${at.sample} (${secondsLabel(sample.started_at_seconds)})`;
}

function cleanPassFinding(samples: Sample[]): Finding {
  const first = samples[0];
  const last = samples[samples.length - 1];
  const span = first && last
    ? ` from ${
      secondsLabel(first.started_at_seconds)
    } through the final sample at ${secondsLabel(last.started_at_seconds)}`
    : "";
  return finding({
    severity: "note",
    code: "erased",
    subject: "deletion",
    message:
      `Every store read 0 and the marker was not retrievable at the final sample; control intact${span}`,
    samples: samples.map((s) => s.index),
  });
}
