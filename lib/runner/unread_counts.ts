/**
 * Counts the test inventory answered beside the contract's four: a store
 * the application counts but does not report in `source_records`,
 * `vector_records` or `cache_records`, so the verdict never sees it. The
 * engine logs them as the run reads the test inventory; the verdict rules
 * turn them into a note. Key names that may be values are counted, never
 * kept past the run.
 *
 * @module
 */

import { otherInventoryCounts } from "../contract/protocol.ts";
import { isFieldName } from "../issues.ts";

/** Which reading of the test inventory answered a count. */
export type ReadingPlace =
  | { phase: "baseline" }
  | { phase: "window"; sample: number }
  | { phase: "cleanup" };

/** One key that reads as a field name, with the reading that speaks for it. */
export interface UnreadCount {
  key: string;
  count: number;
  at: ReadingPlace;
}

/** What the test inventory answered beside the contract's counts over a run. */
export interface UnreadCounts {
  /** Keys that read as field names, in the order first seen. */
  named: UnreadCount[];
  /** How many other keys answered a count above 0 (never their names). */
  unnamed: number;
  /** Window samples whose test inventory answered any of them. */
  samples: number[];
}

/**
 * Which reading speaks for a key: the latest window sample (the final one
 * decides the verdict), else the latest cleanup poll, else the baseline.
 */
const PRIORITY: Record<ReadingPlace["phase"], number> = {
  baseline: 0,
  cleanup: 1,
  window: 2,
};

/** The other counts of a run's test inventory readings, reading by reading. */
export class UnreadCountLog {
  #at: ReadingPlace = { phase: "baseline" };
  #named = new Map<string, UnreadCount>();
  #unnamed = new Set<string>();
  #samples = new Set<number>();

  /** Where the next readings come from. */
  readingAt(place: ReadingPlace): void {
    this.#at = place;
  }

  /** Notes one test inventory answer, as it came. */
  record(answer: Record<string, unknown>): void {
    const counts = otherInventoryCounts(answer);
    if (counts.length === 0) return;
    const at = this.#at;
    if (at.phase === "window") this.#samples.add(at.sample);
    for (const [key, count] of counts) {
      if (!isFieldName(key)) {
        this.#unnamed.add(key);
        continue;
      }
      const known = this.#named.get(key);
      if (known && PRIORITY[known.at.phase] > PRIORITY[at.phase]) continue;
      this.#named.set(key, { key, count, at });
    }
  }

  /** What was logged, or `null` when no reading answered another count. */
  seen(): UnreadCounts | null {
    if (this.#named.size === 0 && this.#unnamed.size === 0) return null;
    return {
      named: [...this.#named.values()],
      unnamed: this.#unnamed.size,
      samples: [...this.#samples].sort((a, b) => a - b),
    };
  }
}
