/**
 * The residual rules, one series at a time: data at the final sample is
 * FAIL; data that went away is a transient residual only when the clean
 * reads after it are evidence enough, else INCONCLUSIVE as
 * `intermittent_residual` (it came back after as many clean reads) or
 * `window_end_unobserved` (the first clean read came more than an interval
 * after the window's end). Data that could not be read again after its last
 * sighting earns none: its request errors already make the run INCONCLUSIVE.
 *
 * @module
 */

import { finding } from "./_finding.ts";
import {
  intermittentMessage,
  persistentMessage,
  transientMessage,
  unobservedMessage,
} from "./_residual_messages.ts";
import {
  clearedAfter,
  comebacksOf,
  dirtyIndexes,
  residualSeries,
  type Series,
  type WindowTiming,
} from "./_residual_series.ts";
import { placeNote, renderedNote, withForms } from "./_retrieval_notes.ts";
import type { Finding, Sample } from "./report.ts";

/** The finding each series earns, retrieval first; none for a series that never read above 0. */
export function residualFindings(
  samples: Sample[],
  timing: WindowTiming,
): Finding[] {
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
    return finding({
      severity: "fail",
      code: series.subject === "retrieval"
        ? "marker_retrievable"
        : "residual_store",
      subject: series.subject,
      message: persistentMessage(series, samples, last) +
        renderedNote(series, [last]) + placeNote(series, [last]),
      samples: dirty,
    });
  }
  const cleared = clearedAfter(series, dirty);
  if (cleared === null) return null;
  const seen = dirty.map((i) => samples[i]!);
  const notes = renderedNote(series, seen) + placeNote(series, seen);
  const comebacks = comebacksOf(series, dirty);
  const evidence = { series, samples, dirty, cleared, comebacks, timing };
  if (
    comebacks.longestGap > 0 && comebacks.cleanAfter <= comebacks.longestGap
  ) {
    return finding({
      severity: "inconclusive",
      code: "intermittent_residual",
      subject: series.subject,
      message: intermittentMessage(evidence) + notes,
      samples: dirty,
    });
  }
  if (windowEndUnobserved(samples[dirty.at(-1)!]!, samples[cleared]!, timing)) {
    return finding({
      severity: "inconclusive",
      code: "window_end_unobserved",
      subject: series.subject,
      message: unobservedMessage(evidence) + notes,
      samples: [...dirty, cleared],
    });
  }
  return finding({
    severity: "transient",
    code: "transient_residual",
    subject: series.subject,
    message: transientMessage(evidence) + notes,
    samples: dirty,
  });
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
