/**
 * Whether a replay that did not pass shows the failure its regression was
 * saved for, or failed on something else. The gate counts any non-PASS
 * replay of an enforced regression as failing either way; this only tells
 * the reader what came back, so a new failure is not read as the old bug.
 * The words are here too, so the CLI, the gate, the pages and MCP say it
 * the same way.
 *
 * @module
 */

import type { RunReport } from "../runner/report.ts";
import { joinAnd } from "../words.ts";
import { failedAssertions, type PinnedAssertion } from "./contract.ts";

/**
 * What of a regression's definition its recurrence reads: its id and the
 * assertions it saved as failed (structural, so the regressions module can
 * import this one without a circle).
 */
export interface SavedFailure {
  /** The regression the failure was saved as. */
  regression_id: string;
  /** The assertions that failed in the run it was saved from. */
  assertions: readonly PinnedAssertion[];
}

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
  definition: Pick<SavedFailure, "assertions">,
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

/** Assertions as a list in words: "a:x and b:y". */
function namesOf(assertions: readonly PinnedAssertion[]): string {
  return joinAnd(assertions.map(assertionName));
}

/**
 * What a replay that did not pass showed of the failure `definition` saved,
 * as the rest of a line: "the saved failure recurred (… failed again)",
 * "the saved failure (…) did not recur; it failed on something else: …",
 * or "it cannot tell whether the saved failure (…) recurred".
 */
export function recurrenceWords(
  recurrence: ReplayRecurrence,
  definition: Pick<SavedFailure, "assertions">,
): string {
  switch (recurrence.kind) {
    case "inconclusive":
      return `it cannot tell whether the saved failure (${
        namesOf(definition.assertions)
      }) recurred`;
    case "recurred":
      return `the saved failure recurred (${
        namesOf(recurrence.recurred)
      } failed again)${
        recurrence.also.length > 0
          ? `, and ${namesOf(recurrence.also)} failed too`
          : ""
      }`;
    case "other_failure":
      return `the saved failure (${
        namesOf(definition.assertions)
      }) did not recur; it failed on something else${
        recurrence.instead.length > 0 ? `: ${namesOf(recurrence.instead)}` : ""
      }`;
  }
}

/**
 * {@link recurrenceWords} as a replay's outcome line says it: led by "the
 * bug is back: " when the saved failure recurred, and followed by `advice`
 * (what to do, with its own leading punctuation) when the replay was
 * INCONCLUSIVE.
 */
export function replayOutcomeWords(
  recurrence: ReplayRecurrence,
  definition: Pick<SavedFailure, "assertions">,
  advice: string,
): string {
  const words = recurrenceWords(recurrence, definition);
  switch (recurrence.kind) {
    case "recurred":
      return `the bug is back: ${words}`;
    case "other_failure":
      return words;
    case "inconclusive":
      return `${words}${advice}`;
  }
}

/**
 * The same as a sentence about a replay of `definition`'s regression, for
 * a page or an answer that shows the replay on its own (no final period):
 * "the failure that regression reg-… was saved for came back: … failed again".
 */
export function recurrenceSentence(
  recurrence: ReplayRecurrence,
  definition: SavedFailure,
): string {
  const id = definition.regression_id;
  switch (recurrence.kind) {
    case "inconclusive":
      return `INCONCLUSIVE: cannot say whether the failure that regression ${id} was saved for (${
        namesOf(definition.assertions)
      }) came back`;
    case "recurred":
      return `the failure that regression ${id} was saved for came back: ${
        namesOf(recurrence.recurred)
      } failed again${
        recurrence.also.length > 0
          ? `, and ${namesOf(recurrence.also)} failed too`
          : ""
      }`;
    case "other_failure":
      return `this replay failed on something else${
        recurrence.instead.length > 0 ? `: ${namesOf(recurrence.instead)}` : ""
      }; the failure that regression ${id} was saved for (${
        namesOf(definition.assertions)
      }) did not recur`;
  }
}

/** The recurrence in a few words, for a line that names several regressions. */
export function recurrenceOutcome(recurrence: ReplayRecurrence): string {
  switch (recurrence.kind) {
    case "inconclusive":
      return "INCONCLUSIVE, so it cannot say whether the saved failure came back";
    case "recurred":
      return "the saved failure came back";
    case "other_failure":
      return "it failed on something else (the saved failure did not recur)";
  }
}
