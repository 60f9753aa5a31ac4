/**
 * How the trace pages put evidence into words. Three facts stay apart:
 * whether the stored events were read whole (read completeness), whether the
 * task declared what it should show and showed it (instrumentation
 * coverage), and whether the host verified an outcome. Loading every stored
 * event says nothing about events never written, so no sentence here ever
 * claims complete coverage without declared, observed profiles.
 *
 * @module
 */

import type { CoverageAssessment } from "../../lib/obs/mod.ts";
import type {
  OutcomeVerification,
  ReadCompleteness,
} from "../../lib/obs/query/mod.ts";

/** The three evidence facts of a read. */
export interface EvidenceFacts {
  read_completeness: ReadCompleteness;
  instrumentation_coverage: CoverageAssessment["state"];
  outcome_verification: OutcomeVerification;
  coverage?: CoverageAssessment;
}

/** What a read of stored events achieved, in words. */
export function readPhrase(
  read: ReadCompleteness,
  bound?: string,
): string {
  switch (read) {
    case "complete":
      return "All stored events loaded";
    case "partial":
      return bound
        ? `Stored events loaded up to the bound (${bound})`
        : "Stored events loaded in part";
    case "untrusted":
      return "Stored events loaded, some with metadata that could not be decoded";
  }
}

/** What the instrumentation shows about end-to-end coverage, in words. */
export function coveragePhrase(facts: EvidenceFacts): string {
  const coverage = facts.coverage;
  switch (facts.instrumentation_coverage) {
    case "unknown":
      return "end-to-end coverage unknown";
    case "partial": {
      const parts: string[] = [];
      const undeclared = coverage
        ? coverage.roots - coverage.declared_roots
        : 0;
      if (coverage && undeclared > 0) {
        parts.push(
          `${undeclared} of ${
            plural(coverage.roots, "task")
          } declare no coverage profile`,
        );
      }
      const stages = [
        ...new Set(coverage?.gaps.flatMap((g) => g.missing_stages) ?? []),
      ];
      if (stages.length > 0) {
        parts.push(`required stages not observed (${stages.join(", ")})`);
      }
      if (coverage?.gaps.some((g) => g.problem === "unregistered_profile")) {
        parts.push("a declared coverage profile is not registered");
      }
      return `end-to-end coverage partial${
        parts.length ? `: ${parts.join("; ")}` : ""
      }`;
    }
    case "complete":
      return "every declared coverage profile had its required stages observed";
  }
}

/**
 * The one sentence on reading and coverage, e.g. "All stored events loaded;
 * end-to-end coverage unknown."
 */
export function evidenceSentence(facts: EvidenceFacts, bound?: string): string {
  return `${readPhrase(facts.read_completeness, bound)}; ${
    coveragePhrase(facts)
  }.`;
}

/** The outcome fact in words. */
export function outcomePhrase(outcome: OutcomeVerification): string {
  return outcome === "recorded"
    ? "A host-verified outcome is recorded (it may record a failure)."
    : "No host-verified outcome is recorded, so success is unknown.";
}

/** `1 event`, `2 events`. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString("en-US")} ${n === 1 ? one : many}`;
}

/** What an id field is called in sentences. */
export const ID_FIELD_WORDS: Readonly<Record<string, string>> = {
  event_id: "event id",
  root_trace_id: "root id",
  turn_id: "turn id",
  run_id: "run id",
  thread_id: "thread id",
  memory_id: "memory id",
  resource_id: "resource id",
};
