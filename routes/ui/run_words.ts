/**
 * A run in words, as the run pages lead with it: the verdict and why in one
 * sentence, and for anything but a clean PASS what to do next (with the
 * exact command where there is one). Pure functions over the report, so the
 * page, its JSON twin and the standalone HTML file say the same thing.
 *
 * @module
 */

import { type Store, STORES } from "../../lib/contract/protocol.ts";
import {
  regressionIdFor,
  type RegressionView,
} from "../../lib/ledger/regressions.ts";
import type { LaterCleanup } from "../../lib/ledger/cleanups.ts";
import { checkAdvice } from "../../lib/runner/finding_checks.ts";
import { notCleanable, stillServedAdvice } from "../../lib/runs/mod.ts";
import type { Finding, RunReport, Sample } from "../../lib/runner/report.ts";
import { capitalized, continuedSentence, joinAnd } from "../../lib/words.ts";
import { runHref } from "./links.ts";

/** How the pages name each store the inventory counts. */
export const STORE_LABEL: Readonly<Record<Store, string>> = {
  source_records: "source store",
  vector_records: "vector index",
  cache_records: "answer cache",
};

/** The short series label of a store (`source`, `vector`, `cache`). */
export function storeShort(store: Store): string {
  return store.replace("_records", "");
}

/** One thing to do next: a sentence and, where there is one, the command. */
export interface NextStep {
  text: string;
  command: string | null;
  /** Pages of this server the sentence names (a run, the regressions), for the served page. */
  links?: { href: string; label: string }[];
}

const REGRESSIONS_LINK = { href: "/regressions", label: "the regressions" };

/** A run's target that was never registered (a config run, such as trace quickstart's). */
export interface UnregisteredTarget {
  targetId: string;
  namespaces: { test: string; control: string };
}

/** The unregistered target of a run, or `null` when it is registered or not known. */
export function unregisteredTarget(
  registered: boolean | null,
  targetId: string,
  namespaces: { test: string; control: string },
): UnregisteredTarget | null {
  return registered === false ? { targetId, namespaces } : null;
}

/**
 * What the pages need of a later `trace external-cleanup` to choose the
 * cleanup step: whether it completed, and whether it found the run's text
 * still served.
 */
export type LaterCleanupOutcome = Pick<
  LaterCleanup,
  "cleanup_id" | "cleanup_complete" | "marker_seen"
>;

/** What the run detail knows besides the report, for the words. */
export interface RunContext {
  /** The regression this run replayed. */
  regressionId: string | null;
  /** The regression this run was saved as, if it was. */
  savedAs: string | null;
  /** That regression's status and latest replay, as the ledger holds them now. */
  saved?: Pick<RegressionView, "status" | "last_result" | "last_run_id"> | null;
  /**
   * The latest `trace external-cleanup` of the run: once one completed there
   * is nothing left to clean, and once one found the application still
   * serving the run's text, another cannot fix that.
   */
  laterCleanup?: LaterCleanupOutcome | null;
  /** Set when the run's target was never registered: no cleanup command can reach it. */
  unregistered?: UnregisteredTarget | null;
}

function seconds(value: number): string {
  return `${value.toFixed(2)} s`;
}

function records(n: number): string {
  return `${n} record${n === 1 ? "" : "s"}`;
}

/** The verdict of a finished report and why, in one sentence. */
export function reportHeadline(report: RunReport): string {
  if (report.verdict === "FAIL") return failHeadline(report);
  if (report.verdict === "PASS") return passHeadline(report);
  const first = report.findings.find((f) => f.severity === "inconclusive");
  if (!first) return "Nothing was decided: the run has no conclusive finding.";
  return `Nothing was decided: ${continuedSentence(first.message)}`;
}

function failHeadline(report: RunReport): string {
  const final = report.samples.at(-1);
  const left: string[] = [];
  for (const f of report.findings) {
    if (f.severity !== "fail") continue;
    if (f.code === "marker_retrievable") {
      const rendered = final?.marker_form === "rendered" ? " (rendered)" : "";
      left.push(`the deleted marker was still retrievable${rendered}`);
    } else if (isStore(f.subject)) {
      const n = final?.inventory?.[f.subject] ?? 0;
      left.push(`the ${STORE_LABEL[f.subject]} still held ${records(n)}`);
    }
  }
  const when = final
    ? `at the final sample, ${
      seconds(final.started_at_seconds)
    } after the deletion was acknowledged`
    : "at the end of the window";
  return `Deleted data was still there ${when}: ${joinAnd(left)}.`;
}

function passHeadline(report: RunReport): string {
  const final = report.samples.at(-1);
  const at = final ? ` (${seconds(final.started_at_seconds)})` : "";
  const residuals = report.findings.filter((f) =>
    f.code === "transient_residual"
  );
  const transient = residuals.map((f) => transientPhrase(f, report.samples));
  // The rules accept a clean read up to one sample interval past the window.
  const window = report.timing.deletion_window_seconds;
  const inside = residuals.every((f) =>
    (clearedAt(f, report.samples) ?? 0) <= window
  );
  const after = transient.length > 0
    ? `, after ${joinAnd(transient)} ${
      inside
        ? "inside the window"
        : `(the ${seconds(window)} window, and one sample interval after it)`
    }`
    : "";
  return `The deletion held: every store read 0 and the marker was gone at the final sample${at}, with the control intact${after}.`;
}

/** When the sample after a residual's last sighting began, if there is one. */
function clearedAt(finding: Finding, samples: Sample[]): number | undefined {
  const last = finding.sample_indexes.at(-1);
  return last === undefined ? undefined : samples[last + 1]?.started_at_seconds;
}

function transientPhrase(finding: Finding, samples: Sample[]): string {
  const cleared = clearedAt(finding, samples);
  const until = cleared === undefined ? "" : ` until ${seconds(cleared)}`;
  const what = finding.subject === "retrieval"
    ? "a retrievable marker"
    : isStore(finding.subject)
    ? `records in the ${STORE_LABEL[finding.subject]}`
    : finding.subject;
  return `${what}${until}`;
}

/** What to do after this run, most useful first; empty for a clean PASS. */
export function nextSteps(report: RunReport, context: RunContext): NextStep[] {
  // A reference system lives in memory and has a known outcome: nothing to fix or clean.
  if (report.kind === "reference") return [];
  const steps: NextStep[] = [];
  const checks = checkAdvice(report).map((text) => ({ text, command: null }));
  if (report.verdict === "FAIL") steps.push(...checks);
  if (report.verdict === "FAIL" && report.kind === "external") {
    steps.push(regressionStep(report, context));
  }
  if (report.verdict === "INCONCLUSIVE") steps.push(...checks);
  if (
    !report.cleanup.cleanup_complete && report.kind === "external" &&
    context.laterCleanup?.cleanup_complete !== true
  ) {
    steps.push(
      cleanupStep(report.run_id, context),
    );
  }
  return steps;
}

function regressionStep(report: RunReport, context: RunContext): NextStep {
  if (context.regressionId) {
    return {
      text:
        `This replay of ${context.regressionId} did not pass: fix the application, then replay the regression again (comparing it with the saved run shows the details).`,
      command: `trace external-replay ${context.regressionId}`,
    };
  }
  if (!context.savedAs && context.unregistered) {
    // Saving would be refused: a replay reaches the application through a
    // registered target only.
    return {
      text:
        `This failure cannot be saved as a regression: its target ${context.unregistered.targetId} was never registered (as trace quickstart runs its demo), and only a registered target can replay it. Register the config, run it as that target (trace external-run --target NAME) and save that run.`,
      command: "trace external-register --target NAME --config FILE",
    };
  }
  const id = context.savedAs ?? regressionIdFor(report.run_id);
  if (context.savedAs && context.saved?.status === "enforced") {
    return enforcedStep(id, context.saved);
  }
  if (context.savedAs) {
    return {
      text:
        `Saved as regression ${id}: once the application is fixed, replay it. A passing replay makes it enforced.`,
      command: `trace external-replay ${id}`,
      links: [REGRESSIONS_LINK],
    };
  }
  return {
    text:
      `Save this failure as a regression now (trace external-save ${report.run_id}); after you fix the application, replay it (trace external-replay ${id}).`,
    command: `trace external-save ${report.run_id}`,
  };
}

/**
 * The step of a run whose regression a replay already made enforced: the
 * page must not still promise what a passing replay will do.
 */
function enforcedStep(
  id: string,
  saved: NonNullable<RunContext["saved"]>,
): NextStep {
  const latest = saved.last_run_id ?? "";
  return {
    text: saved.last_result === "PASS"
      ? `Saved as regression ${id}, now enforced: its replay ${latest} passed, so a failing replay from now on is a real regression and fails the gate. Replay it after each change to the application.`
      : `Saved as regression ${id}, enforced, and its latest replay ${latest} did not pass: the gate fails until a replay passes again. Fix the application, then replay it.`,
    command: `trace external-replay ${id}`,
    links: [
      ...(latest === ""
        ? []
        : [{ href: runHref(latest), label: `its replay ${latest}` }]),
      REGRESSIONS_LINK,
    ],
  };
}

/**
 * The step that removes what a run left in the staging application; after a
 * later cleanup found the application still serving the run's text, the
 * step says to fix the application first (`stillServedAdvice` of lib/runs).
 */
export function cleanupStep(
  runId: string,
  { unregistered = null, laterCleanup = null }: {
    unregistered?: UnregisteredTarget | null | undefined;
    laterCleanup?: LaterCleanupOutcome | null | undefined;
  } = {},
): NextStep {
  const stillServed = stillServedAdvice(runId, laterCleanup);
  if (stillServed !== null && !unregistered) {
    return {
      text: `${capitalized(stillServed)}.`,
      command: `trace external-cleanup ${runId}`,
    };
  }
  if (unregistered) {
    const why = notCleanable(unregistered.targetId, unregistered.namespaces);
    return {
      text:
        `Synthetic records may remain in the staging application, but ${why}.`,
      command: null,
    };
  }
  return {
    text:
      "Synthetic records may remain in the staging application: remove them before the next run.",
    command: `trace external-cleanup ${runId}`,
  };
}

function isStore(subject: string): subject is Store {
  return (STORES as readonly string[]).includes(subject);
}

/** A finding message as the rest of a sentence: lower-case start, one final period. */
