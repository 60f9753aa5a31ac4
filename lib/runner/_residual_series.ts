/**
 * The samples as the residual rules read them: one series per subject (the
 * marker's retrieval first, then each store), the samples that read it above
 * 0, the clean reads it came back after and the first clean read after its
 * last sighting, with the window and interval those reads are timed against.
 * Kept apart from the rules so the rules and their messages read one model.
 *
 * @module
 */

import { STORES } from "../contract/protocol.ts";
import type { Sample } from "./report.ts";

/** The configured deletion window and sample interval the residual rules read the samples against. */
export interface WindowTiming {
  windowSeconds: number;
  intervalSeconds: number;
}

/** What one subject read in each sample: a count, 1 or 0 for the marker, null when unread. */
export type Series = { subject: string; values: (number | null)[] };

/** One series per subject: retrieval, then each store. */
export function residualSeries(samples: Sample[]): Series[] {
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

/** The samples that read the series above 0. */
export function dirtyIndexes(series: Series): number[] {
  return series.values.flatMap((v, i) => (v !== null && v > 0 ? [i] : []));
}

/** How data that went away came back: the longest run of clean reads it came back after, and the clean reads after its last sighting. */
export interface Comebacks {
  /** Clean reads in each gap between two sightings, in order. */
  gaps: number[];
  /** Clean reads in the longest such gap; 0 when it never came back. */
  longestGap: number;
  /** Clean reads after the last sighting. */
  cleanAfter: number;
}

/** The comebacks of a series, given the samples that read it above 0. */
export function comebacksOf(series: Series, dirty: number[]): Comebacks {
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
 * The first sample after the last non-zero reading that read 0, or `null`.
 * Only such a reading shows the data went away: a store that could no
 * longer be read (request errors to the end) is not a transient residual,
 * and its request errors already make the run INCONCLUSIVE.
 */
export function clearedAfter(series: Series, dirty: number[]): number | null {
  const lastDirty = dirty[dirty.length - 1]!;
  const cleared = series.values.findIndex((v, i) => i > lastDirty && v === 0);
  return cleared < 0 ? null : cleared;
}

/**
 * A series that read above 0 and then read 0, as the residual rules judged
 * it: its sightings (`dirty`), the clean read after the last one
 * (`cleared`) and the clean reads it came back after; what their messages
 * word.
 */
export interface ResidualEvidence {
  series: Series;
  samples: Sample[];
  dirty: number[];
  cleared: number;
  comebacks: Comebacks;
  timing: WindowTiming;
}
