/**
 * The verdict rules. Every code they emit is declared in `rules.ts` under
 * the rules revision. Data left at the final sample is FAIL; a run
 * interrupted before its final sample has none, so it is INCONCLUSIVE
 * whatever its last sample showed; a failed baseline, a missing
 * observation, a request error, an incomplete inventory or a lost control
 * is INCONCLUSIVE; so is data that went away on a clean ending too thin to
 * show it: one that came back before after as many clean reads, or a first
 * clean read that came more than an interval after the window's end;
 * otherwise PASS, with transient residuals recorded. A
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
      findings.push(...residualFindings(input.samples, input));
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
  const when = interruptedDuring === "window"
    ? `during the ${secondsLabel(input.windowSeconds)} window`
    : `during ${interruptedDuring}`;
  const seen = samples.length > 0 ? `; ${lastSamplesNote(samples)}` : "";
  return finding(
    "inconclusive",
    "interrupted",
    "window",
    `The run was interrupted ${when}, before its final sample${seen}; cleanup still ran`,
    samples.map((s) => s.index),
  );
}

/** Why what a sample showed is context: it was not the final sample. */
const UNDECIDED = "which only the final sample could have decided";

/**
 * What the last sample showed. A sample that got no usable answer is not a
 * clean one: when part of it could not be read and the rest showed nothing,
 * the note says so and names what the last sample read in full showed.
 */
function lastSamplesNote(samples: Sample[]): string {
  const last = samples.at(-1)!;
  const unread = unreadAt(last);
  const left = leftAt(last);
  if (unread.length === 0) {
    return `its last sample (${sampleLabel(last)}) ${
      shownBy(left)
    }, ${UNDECIDED}`;
  }
  const whole = unread.length === UNREAD_PARTS ? "" : " in full";
  const note = `its last sample (${
    sampleLabel(last)
  }) could not be read${whole} (no usable answer to ${joinAnd(unread)})`;
  if (left.length > 0) {
    return `${note} and still showed ${joinAnd(left)}, ${UNDECIDED}`;
  }
  const read = samples.findLast((s) => unreadAt(s).length === 0);
  return read
    ? `${note}; the last sample read in full (${sampleLabel(read)}) ${
      shownBy(leftAt(read))
    }, ${UNDECIDED}`
    : `${note}, and no sample was read in full`;
}

function sampleLabel(sample: Sample): string {
  return `#${sample.index} at ${secondsLabel(sample.started_at_seconds)}`;
}

function shownBy(left: string[]): string {
  return left.length > 0 ? `still showed ${joinAnd(left)}` : "was clean";
}

/** How many test readings a sample has: the inventory and the marker query. */
const UNREAD_PARTS = 2;

/** The test readings of a sample that got no usable answer. */
function unreadAt(sample: Sample): string[] {
  const unread: string[] = [];
  if (sample.inventory === null) unread.push("the test inventory");
  if (sample.marker_seen === null) unread.push("the marker query");
  return unread;
}

/** What a sample still showed, in words. */
function leftAt(sample: Sample): string[] {
  const left = STORES.filter((store) => (sample.inventory?.[store] ?? 0) > 0)
    .map((store) => `${store} ${sample.inventory![store]}`);
  if (sample.marker_seen) left.push("the marker retrievable");
  return left;
}

/** The configured deletion window and sample interval the residual rules read the samples against. */
interface WindowTiming {
  windowSeconds: number;
  intervalSeconds: number;
}

function residualFindings(samples: Sample[], timing: WindowTiming): Finding[] {
  const findings: Finding[] = [];
  for (const series of residualSeries(samples)) {
    const result = residualFinding(series, samples, timing);
    if (result) findings.push(withForms(result, series, samples));
  }
  return findings;
}

/**
 * What one series shows: data at the final sample FAILs; data that went
 * away passes as a transient residual only when the clean reads after it
 * are evidence enough: more of them than it ever came back after, and the
 * first of them close enough to the window's end to show it was gone then.
 */
function residualFinding(
  series: Series,
  samples: Sample[],
  timing: WindowTiming,
): Finding | null {
  const dirty = dirtyIndexes(series);
  if (dirty.length === 0) return null;
  const last = samples[samples.length - 1]!;
  const finalValue = series.values[series.values.length - 1];
  if (finalValue !== null && finalValue !== undefined && finalValue > 0) {
    return finding(
      "fail",
      series.subject === "retrieval" ? "marker_retrievable" : "residual_store",
      series.subject,
      persistentMessage(series, samples, last) +
        renderedNote(series, [last]) + placeNote(series, [last]),
      dirty,
    );
  }
  const cleared = clearedAfter(series, dirty);
  if (cleared === null) return null;
  const seen = dirty.map((i) => samples[i]!);
  const notes = renderedNote(series, seen) + placeNote(series, seen);
  const comebacks = comebacksOf(series, dirty);
  if (
    comebacks.longestGap > 0 && comebacks.cleanAfter <= comebacks.longestGap
  ) {
    return finding(
      "inconclusive",
      "intermittent_residual",
      series.subject,
      intermittentMessage(series, samples, dirty, comebacks) + notes,
      dirty,
    );
  }
  if (windowEndUnobserved(samples[dirty.at(-1)!]!, samples[cleared]!, timing)) {
    return finding(
      "inconclusive",
      "window_end_unobserved",
      series.subject,
      unobservedMessage(series, samples, dirty, cleared, timing) + notes,
      [...dirty, cleared],
    );
  }
  return finding(
    "transient",
    "transient_residual",
    series.subject,
    transientMessage(series, samples, dirty, cleared, timing) + notes,
    dirty,
  );
}

/** The samples that read the series above 0. */
function dirtyIndexes(series: Series): number[] {
  return series.values.flatMap((v, i) => (v !== null && v > 0 ? [i] : []));
}

/** How data that went away came back: the longest run of clean reads it came back after, and the clean reads after its last sighting. */
interface Comebacks {
  /** Clean reads in each gap between two sightings, in order. */
  gaps: number[];
  /** Clean reads in the longest such gap; 0 when it never came back. */
  longestGap: number;
  /** Clean reads after the last sighting. */
  cleanAfter: number;
}

function comebacksOf(series: Series, dirty: number[]): Comebacks {
  const cleanBetween = (from: number, to: number) =>
    series.values.slice(from + 1, to).filter((v) => v === 0).length;
  const gaps = dirty.slice(1).map((index, k) => cleanBetween(dirty[k]!, index))
    .filter((clean) => clean > 0);
  return {
    gaps,
    longestGap: Math.max(0, ...gaps),
    cleanAfter: cleanBetween(dirty.at(-1)!, series.values.length),
  };
}

/**
 * Whether the schedule slipped past the window's end: data last seen in a
 * sample begun inside the window, and no read until more than one interval
 * after the window ended. Sightings are timed by when their sample began:
 * a sample records when it began and ended, not when each answer arrived.
 */
function windowEndUnobserved(
  lastSeen: Sample,
  cleared: Sample,
  timing: WindowTiming,
): boolean {
  return lastSeen.started_at_seconds < timing.windowSeconds &&
    cleared.started_at_seconds >
      timing.windowSeconds + timing.intervalSeconds;
}

/** Most sighting times one message lists; past it, their count and the last. */
const MAX_LISTED_SIGHTINGS = 4;

/** "at 0.00 s", "from 0.00 s to 1.00 s", "at 0.00 s, 2.00 s and 4.00 s" or "in 6 samples, the last at 5.00 s". */
function sightingsPhrase(samples: Sample[], dirty: number[]): string {
  const at = dirty.map((i) => secondsLabel(samples[i]!.started_at_seconds));
  if (at.length === 1) return `at ${at[0]}`;
  const contiguous = dirty.at(-1)! - dirty[0]! === dirty.length - 1;
  if (contiguous) return `from ${at[0]} to ${at.at(-1)}`;
  if (at.length <= MAX_LISTED_SIGHTINGS) return `at ${joinAnd(at)}`;
  return `in ${at.length} samples, the last at ${at.at(-1)}`;
}

/** "the marker was retrievable", "vector_records was 3", "vector_records was up to 5". */
function seenPhrase(series: Series, dirty: number[]): string {
  if (series.subject === "retrieval") return "the marker was retrievable";
  const values = new Set(dirty.map((i) => series.values[i]!));
  return values.size === 1
    ? `${series.subject} was ${[...values][0]}`
    : `${series.subject} was up to ${Math.max(...values)}`;
}

function cleanReads(count: number): string {
  return count === 1 ? "1 clean read" : `${count} clean reads`;
}

/** "came back after 1 clean read", "came back 2 times, each after 1 clean read", "came back 3 times, after up to 2 clean reads". */
function cameBackPhrase(comebacks: Comebacks): string {
  const { gaps, longestGap } = comebacks;
  if (gaps.length === 1) return `came back after ${cleanReads(longestGap)}`;
  const spread = gaps.every((gap) => gap === longestGap)
    ? "each after"
    : "after up to";
  return `came back ${gaps.length} times, ${spread} ${cleanReads(longestGap)}`;
}

/** "inside the 5.00 s window", or for a read after the window's end, how it relates to the window. */
function clearedPhrase(cleared: Sample, timing: WindowTiming): string {
  const window = secondsLabel(timing.windowSeconds);
  return cleared.started_at_seconds <= timing.windowSeconds
    ? `inside the ${window} window`
    : `within one ${
      secondsLabel(timing.intervalSeconds)
    } sample interval after the ${window} window ended`;
}

function transientMessage(
  series: Series,
  samples: Sample[],
  dirty: number[],
  cleared: number,
  timing: WindowTiming,
): string {
  const comebacks = comebacksOf(series, dirty);
  const back = comebacks.gaps.length > 0
    ? ` (it ${cameBackPhrase(comebacks)})`
    : "";
  const clearedSample = samples[cleared]!;
  return `${seenPhrase(series, dirty)} ${
    sightingsPhrase(samples, dirty)
  }${back} and read 0 from ${secondsLabel(clearedSample.started_at_seconds)}, ${
    clearedPhrase(clearedSample, timing)
  } (transient residual)`;
}

function intermittentMessage(
  series: Series,
  samples: Sample[],
  dirty: number[],
  comebacks: Comebacks,
): string {
  const lastSeen = secondsLabel(samples[dirty.at(-1)!]!.started_at_seconds);
  const follow = comebacks.cleanAfter === 1 ? "follows" : "follow";
  return `${seenPhrase(series, dirty)} ${sightingsPhrase(samples, dirty)}: it ${
    cameBackPhrase(comebacks)
  }, and only ${
    cleanReads(comebacks.cleanAfter)
  } ${follow} its last sighting at ${lastSeen}, too few to show it is gone; sample longer, or find the store or replica that still serves it`;
}

function unobservedMessage(
  series: Series,
  samples: Sample[],
  dirty: number[],
  cleared: number,
  timing: WindowTiming,
): string {
  const next = samples[cleared]!;
  const late = next.started_at_seconds - timing.windowSeconds;
  const slowest = samples.slice(dirty.at(-1)!, cleared).reduce((a, b) =>
    b.ended_at_seconds - b.started_at_seconds >
        a.ended_at_seconds - a.started_at_seconds
      ? b
      : a
  );
  return `${seenPhrase(series, dirty)} ${
    sightingsPhrase(samples, dirty)
  } and next read 0 at ${secondsLabel(next.started_at_seconds)}, ${
    secondsLabel(late)
  } after the ${
    secondsLabel(timing.windowSeconds)
  } window ended, more than its ${
    secondsLabel(timing.intervalSeconds)
  } sample interval: the adapter's answers took long (sample #${slowest.index} took ${
    secondsLabel(slowest.ended_at_seconds - slowest.started_at_seconds)
  }), so the run did not see whether the data was gone when the window ended; use a longer window or interval, or make the adapter answer faster`;
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
    if (!place) continue;
    if (place.answer === "inventory") {
      places.add(
        `in the field ${place.field} of the ${place.query} namespace's /inventory answer: the adapter still lists the deleted record, whatever its counts say`,
      );
      continue;
    }
    if (place.query === "test" && place.field === "text") continue;
    places.add(
      place.query === "test"
        ? `in the field ${place.field} of the /query answer rather than its text`
        : `in the field ${place.field} of the control namespace's /query answer: the deleted canary is retrievable from outside the test namespace`,
    );
  }
  if (places.size === 0) return "";
  return ` (seen ${[...places].slice(0, MAX_PLACES).join("; and ")})`;
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
    let back = series.values.length - 1;
    while (back > cleanBefore && (series.values[back - 1] ?? 0) > 0) back--;
    // The clean read the last comeback followed, and whether it flapped before.
    const lastClean = series.values.lastIndexOf(0, back - 1);
    const flapped = series.values.slice(cleanBefore, lastClean)
      .some((v) => v !== null && v > 0);
    const subject = series.subject === "retrieval"
      ? "the marker"
      : series.subject;
    const state = series.subject === "retrieval" ? "not retrievable" : "0";
    const before = flapped
      ? ` (it had read ${state} and come back before, first at ${
        secondsLabel(samples[cleanBefore]!.started_at_seconds)
      })`
      : "";
    return `${subject} read ${state} at ${
      secondsLabel(
        samples[flapped ? lastClean : cleanBefore]!.started_at_seconds,
      )
    } but came back at ${
      secondsLabel(samples[back]!.started_at_seconds)
    } and was still there at the final sample at ${finalAt}${before}`;
  }
  if (series.subject === "retrieval") {
    // An /inventory listing is not retrieval through /query: say where it was.
    const through = samples.some((s) =>
        s.marker_found_in?.answer !== "inventory" && s.marker_seen === true
      )
      ? "retrievable through /query"
      : "in the adapter's answers";
    return `the marker stayed ${through} through the final sample at ${finalAt}`;
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
