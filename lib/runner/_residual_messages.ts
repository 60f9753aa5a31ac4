/**
 * What the residual findings say: when the data was seen, how it came back,
 * when it read 0 and what to do next. Words only: which finding a series
 * earns is decided in `_residual_rules.ts`.
 *
 * @module
 */

import { joinAnd } from "../words.ts";
import { secondsLabel } from "./_finding.ts";
import type {
  Comebacks,
  ResidualEvidence,
  Series,
  WindowTiming,
} from "./_residual_series.ts";
import type { Sample } from "./report.ts";

/** Data still there at the final sample: how long it stayed, or when it came back. */
export function persistentMessage(
  series: Series,
  samples: Sample[],
  last: Sample,
): string {
  const finalAt = secondsLabel(last.started_at_seconds);
  const finalValue = series.values[series.values.length - 1]!;
  const cleanBefore = series.values.findIndex((v) => v === 0);
  if (cleanBefore >= 0) {
    // The first sighting of the last comeback: an unread sample inside it
    // (null) is not a clean read, so the scan goes past it, then lands on a
    // sample that read the data.
    let back = series.values.length - 1;
    while (back > cleanBefore && series.values[back - 1] !== 0) back--;
    while (series.values[back] === null) back++;
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

/** Data that went away in time: when it was seen and when it read 0. */
export function transientMessage(evidence: ResidualEvidence): string {
  const { series, samples, dirty, cleared, comebacks, timing } = evidence;
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

/** Data that came back after as many clean reads as followed its last sighting. */
export function intermittentMessage(evidence: ResidualEvidence): string {
  const { series, samples, dirty, comebacks } = evidence;
  const lastSeen = secondsLabel(samples[dirty.at(-1)!]!.started_at_seconds);
  const follow = comebacks.cleanAfter === 1 ? "follows" : "follow";
  return `${seenPhrase(series, dirty)} ${sightingsPhrase(samples, dirty)}: it ${
    cameBackPhrase(comebacks)
  }, and only ${
    cleanReads(comebacks.cleanAfter)
  } ${follow} its last sighting at ${lastSeen}, too few to show it is gone; sample longer, or find the store or replica that still serves it`;
}

/** Data whose first clean read came more than an interval after the window's end, and the slowest sample that pushed it there. */
export function unobservedMessage(evidence: ResidualEvidence): string {
  const { series, samples, dirty, cleared, timing } = evidence;
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
