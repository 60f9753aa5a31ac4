/**
 * The finding of a run interrupted before its final sample: INCONCLUSIVE,
 * since only the final sample decides residuals, with what the last sample
 * showed as context. A sample that got no usable answer is never called
 * clean: the note names what could not be read and what the last sample
 * read in full showed.
 *
 * @module
 */

import { STORES } from "../contract/protocol.ts";
import { joinAnd } from "../words.ts";
import { finding, secondsLabel } from "./_finding.ts";
import type { RunPhase } from "./events.ts";
import type { Finding, Sample } from "./report.ts";

/** What the interrupted finding reads of a run. */
export interface InterruptedRun {
  samples: Sample[];
  windowSeconds: number;
  /** Phase during which the run was interrupted. */
  interruptedDuring: RunPhase | null;
}

/** An interrupted run: no final sample, so what the last sample showed is context, not a verdict. */
export function interruptedFinding(input: InterruptedRun): Finding {
  const { samples, interruptedDuring } = input;
  const when = interruptedDuring === "window"
    ? `during the ${secondsLabel(input.windowSeconds)} window`
    : `during ${interruptedDuring}`;
  const seen = samples.length > 0 ? `; ${lastSamplesNote(samples)}` : "";
  return finding({
    severity: "inconclusive",
    code: "interrupted",
    subject: "window",
    message:
      `The run was interrupted ${when}, before its final sample${seen}; cleanup still ran`,
    samples: samples.map((s) => s.index),
  });
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
