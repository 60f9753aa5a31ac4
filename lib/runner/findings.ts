/**
 * The verdict rules. Every code they emit is declared in `rules.ts` under
 * the rules revision. Data left at the final sample is FAIL; a run
 * interrupted before its final sample has none, so it is INCONCLUSIVE
 * whatever its last sample showed; a failed baseline, a missing
 * observation, a request error, an incomplete inventory or a lost control
 * is INCONCLUSIVE; otherwise PASS, with transient residuals recorded. A
 * marker seen in a rendered spelling is retrieval evidence like an exact
 * one. Cleanup failure turns PASS into INCONCLUSIVE; FAIL stays FAIL.
 * Counts the test inventory answered beside the contract's are a note:
 * Trace cannot judge a store it is not told is one, nor ignore it silently.
 *
 * @module
 */

import { STORES } from "../contract/protocol.ts";
import type { RunPhase } from "./events.ts";
import { describeRendering, type MarkerForm } from "./marker.ts";
import type { FindingCode } from "./rules.ts";
import type { ReadingPlace, UnreadCounts } from "./unread_counts.ts";
import { joinAnd } from "../words.ts";
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
        finding(
          "inconclusive",
          "baseline_failed",
          "baseline",
          `Baseline not established: ${problem}`,
          [],
        ),
      );
    }
  }
  if (input.deletion && !input.deletion.acknowledged) {
    const why = input.deletion.error?.message ?? "no acknowledgement";
    findings.push(
      finding(
        "inconclusive",
        "delete_unacknowledged",
        "deletion",
        `The deletion was not acknowledged: ${why}`,
        [],
      ),
    );
  }
  if (input.samples.length > 0) {
    // Without a final sample there is nothing to judge residuals against.
    if (input.interruptedDuring === null) {
      findings.push(...residualFindings(input.samples, input.windowSeconds));
    }
    findings.push(...observationFindings(input.samples));
    findings.push(...controlFindings(input.samples));
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

function finding(
  severity: Finding["severity"],
  code: FindingCode,
  subject: string,
  message: string,
  sampleIndexes: number[],
): Finding {
  return { severity, code, subject, message, sample_indexes: sampleIndexes };
}

/** Seconds formatted as in reports: two decimals. */
export function secondsLabel(seconds: number): string {
  return `${seconds.toFixed(2)} s`;
}

type Series = { subject: string; values: (number | null)[] };

function residualSeries(samples: Sample[]): Series[] {
  const stores: Series[] = STORES.map((store) => ({
    subject: store,
    values: samples.map((s) => (s.inventory ? s.inventory[store] : null)),
  }));
  const marker: Series = {
    subject: "retrieval",
    values: samples.map((
      s,
    ) => (s.marker_seen === null ? null : s.marker_seen ? 1 : 0)),
  };
  // Retrieval first: an answer that still returns deleted data is what a user sees.
  return [marker, ...stores];
}

/** An interrupted run: no final sample, so what the last sample showed is context, not a verdict. */
function interruptedFinding(input: AssessmentInput): Finding {
  const { samples, interruptedDuring } = input;
  const last = samples.at(-1);
  const when = interruptedDuring === "window"
    ? `during the ${secondsLabel(input.windowSeconds)} window`
    : `during ${interruptedDuring}`;
  let seen = "";
  if (last) {
    const left = leftAt(last);
    seen = `; its last sample (#${last.index} at ${
      secondsLabel(last.started_at_seconds)
    }) ${
      left.length > 0 ? `still showed ${left.join(", ")}` : "was clean"
    }, which only the final sample could have decided`;
  }
  return finding(
    "inconclusive",
    "interrupted",
    "window",
    `The run was interrupted ${when}, before its final sample${seen}; cleanup still ran`,
    samples.map((s) => s.index),
  );
}

/** What a sample still showed, in words. */
function leftAt(sample: Sample): string[] {
  const left = STORES.filter((store) => (sample.inventory?.[store] ?? 0) > 0)
    .map((store) => `${store} ${sample.inventory![store]}`);
  if (sample.marker_seen) left.push("the marker retrievable");
  return left;
}

function residualFindings(samples: Sample[], windowSeconds: number): Finding[] {
  const last = samples[samples.length - 1]!;
  const findings: Finding[] = [];
  for (const series of residualSeries(samples)) {
    const finalValue = series.values[series.values.length - 1];
    const dirty = series.values.flatMap((
      v,
      i,
    ) => (v !== null && v > 0 ? [i] : []));
    if (finalValue !== null && finalValue !== undefined && finalValue > 0) {
      findings.push(
        withForms(
          finding(
            "fail",
            series.subject === "retrieval"
              ? "marker_retrievable"
              : "residual_store",
            series.subject,
            persistentMessage(series, samples, last) +
              renderedNote(series, [last]) + placeNote(series, [last]),
            dirty,
          ),
          series,
          samples,
        ),
      );
    } else if (dirty.length > 0 && clearedAfter(series, dirty) !== null) {
      findings.push(
        withForms(
          finding(
            "transient",
            "transient_residual",
            series.subject,
            transientMessage(series, samples, dirty, windowSeconds) +
              renderedNote(series, dirty.map((i) => samples[i]!)) +
              placeNote(series, dirty.map((i) => samples[i]!)),
            dirty,
          ),
          series,
          samples,
        ),
      );
    }
  }
  return findings;
}

/** Retrieval findings name the forms the marker was seen in. */
function withForms(
  result: Finding,
  series: Series,
  samples: Sample[],
): Finding {
  if (series.subject !== "retrieval") return result;
  const forms = new Set(
    result.sample_indexes.map((i) => samples[i]!.marker_form),
  );
  result.marker_forms = (["exact", "rendered"] as const).filter((
    form: MarkerForm,
  ) => forms.has(form));
  return result;
}

/** ", rendered as Markdown escapes (not byte for byte)" when a retrieval finding rests on rendered answers. */
function renderedNote(series: Series, samples: Sample[]): string {
  if (series.subject !== "retrieval") return "";
  const rendered = samples.filter((s) => s.marker_form === "rendered");
  if (rendered.length === 0) return "";
  const traits = [...new Set(rendered.flatMap((s) => s.marker_rendering))];
  const all = rendered.length === samples.length;
  return ` (${all ? "" : "in some samples "}rendered with ${
    describeRendering(traits)
  } rather than byte for byte: the answer still carries the marker)`;
}

/** Most places one retrieval finding names; a run that moves the marker around names the first few. */
const MAX_PLACES = 3;

/**
 * Where a retrieval finding's marker was, when not in the test answer's
 * `text`: another field of that answer, or the control query's answer.
 */
function placeNote(series: Series, samples: Sample[]): string {
  if (series.subject !== "retrieval") return "";
  const places = new Set<string>();
  for (const sample of samples) {
    const place = sample.marker_found_in;
    if (!place || (place.query === "test" && place.field === "text")) continue;
    places.add(
      place.query === "test"
        ? `in the field ${place.field} of the /query answer rather than its text`
        : `in the field ${place.field} of the control namespace's /query answer: the deleted canary is retrievable from outside the test namespace`,
    );
  }
  if (places.size === 0) return "";
  return ` (seen ${[...places].slice(0, MAX_PLACES).join("; and ")})`;
}

function describeValue(series: Series, value: number): string {
  return series.subject === "retrieval"
    ? "the marker was retrievable"
    : `${series.subject} was ${value}`;
}

function persistentMessage(
  series: Series,
  samples: Sample[],
  last: Sample,
): string {
  const finalAt = secondsLabel(last.started_at_seconds);
  const finalValue = series.values[series.values.length - 1]!;
  const cleanBefore = series.values.findIndex((v) => v === 0);
  if (cleanBefore >= 0) {
    const firstClean = samples[cleanBefore]!.started_at_seconds;
    let back = series.values.length - 1;
    while (back > cleanBefore && (series.values[back - 1] ?? 0) > 0) back--;
    const subject = series.subject === "retrieval"
      ? "the marker"
      : series.subject;
    const state = series.subject === "retrieval" ? "not retrievable" : "0";
    return `${subject} read ${state} at ${
      secondsLabel(firstClean)
    } but came back at ${
      secondsLabel(samples[back]!.started_at_seconds)
    } and was still there at the final sample at ${finalAt}`;
  }
  if (series.subject === "retrieval") {
    return `the marker stayed retrievable through /query through the final sample at ${finalAt}`;
  }
  return `${series.subject} stayed at ${finalValue} through the final sample at ${finalAt}`;
}

/**
 * The first sample after the last non-zero reading that read 0, or `null`.
 * Only such a reading shows the data went away: a store that could no
 * longer be read (request errors to the end) is not a transient residual,
 * and its request errors already make the run INCONCLUSIVE.
 */
function clearedAfter(series: Series, dirty: number[]): number | null {
  const lastDirty = dirty[dirty.length - 1]!;
  const cleared = series.values.findIndex((v, i) => i > lastDirty && v === 0);
  return cleared < 0 ? null : cleared;
}

function transientMessage(
  series: Series,
  samples: Sample[],
  dirty: number[],
  windowSeconds: number,
): string {
  const first = samples[dirty[0]!]!;
  const cleared = samples[clearedAfter(series, dirty)!]!;
  const value = series.values[dirty[0]!]!;
  return `${describeValue(series, value)} at ${
    secondsLabel(first.started_at_seconds)
  }${cameBackNote(series, samples, dirty)} and read 0 from ${
    secondsLabel(cleared.started_at_seconds)
  }, inside the ${secondsLabel(windowSeconds)} window (transient residual)`;
}

/**
 * ", read 0 at … but came back at …," when the data went away and came back
 * inside the window: a write-back (a re-index, a cache refill) that a later
 * sample happened to miss, which the user should hear about.
 */
function cameBackNote(
  series: Series,
  samples: Sample[],
  dirty: number[],
): string {
  const lastDirty = dirty[dirty.length - 1]!;
  const gap = series.values.findIndex((v, i) =>
    i > dirty[0]! && i < lastDirty && v === 0
  );
  if (gap < 0) return "";
  const back = dirty.find((i) => i > gap)!;
  return `, read 0 at ${
    secondsLabel(samples[gap]!.started_at_seconds)
  } but came back at ${secondsLabel(samples[back]!.started_at_seconds)},`;
}

function observationFindings(samples: Sample[]): Finding[] {
  const findings: Finding[] = [];
  const failed = samples.filter((s) => s.errors.length > 0);
  if (failed.length > 0) {
    const first = failed[0]!;
    const error = first.errors[0]!;
    findings.push(
      finding(
        "inconclusive",
        "request_error",
        "observation",
        `${failed.length} of ${samples.length} sample(s) had request errors; first at ${
          secondsLabel(first.started_at_seconds)
        }: ${error.message}`,
        failed.map((s) => s.index),
      ),
    );
  }
  const incomplete = samples.filter((s) =>
    s.inventory !== null && !s.inventory.complete
  );
  if (incomplete.length > 0) {
    findings.push(
      finding(
        "inconclusive",
        "inventory_incomplete",
        "inventory",
        `The test inventory answered complete: false in ${incomplete.length} sample(s), so those counts cannot prove erasure`,
        incomplete.map((s) => s.index),
      ),
    );
  }
  const controlUnknown = samples.filter((s) =>
    s.control_present === null &&
    !s.errors.some((e) => e.namespace === "control" && e.op === "inventory")
  );
  if (controlUnknown.length > 0) {
    findings.push(
      finding(
        "inconclusive",
        "control_inventory_incomplete",
        "control",
        `The control inventory answered complete: false in ${controlUnknown.length} sample(s), so the control cannot be shown intact`,
        controlUnknown.map((s) => s.index),
      ),
    );
  }
  return findings;
}

function controlFindings(samples: Sample[]): Finding[] {
  const lost = samples.filter((s) =>
    s.control_present === false || s.control_seen === false
  );
  if (lost.length === 0) return [];
  const first = lost[0]!;
  const what = first.control_present === false
    ? "no longer counted in its inventory"
    : "no longer retrievable";
  return [
    finding(
      "inconclusive",
      "control_lost",
      "control",
      `The control record was ${what} at ${
        secondsLabel(first.started_at_seconds)
      }: the deletion reached data outside the test namespace, or the adapter misreports the control, so the result cannot be trusted`,
      lost.map((s) => s.index),
    ),
  ];
}

function cleanupFindings(cleanup: Cleanup, verdict: Verdict): Finding[] {
  if (cleanup.cleanup_complete) return [];
  const detail = cleanup.problems.join("; ") || "synthetic records remain";
  if (verdict === "PASS") {
    return [
      finding(
        "inconclusive",
        "cleanup_incomplete",
        "cleanup",
        `Cleanup did not complete: ${detail}`,
        [],
      ),
    ];
  }
  return [
    finding(
      "note",
      "cleanup_incomplete",
      "cleanup",
      `Cleanup did not complete: ${detail}`,
      [],
    ),
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
  return finding(
    "note",
    "unread_inventory_count",
    "inventory",
    `The test inventory also answered ${what}, which Trace does not count: count every store of your application in source_records, vector_records or cache_records, or Trace cannot see what it keeps`,
    unread.samples,
  );
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
  return finding(
    "note",
    "erased",
    "deletion",
    `Every store read 0 and the marker was not retrievable at the final sample; control intact${span}`,
    samples.map((s) => s.index),
  );
}
