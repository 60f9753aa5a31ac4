/**
 * Deletion defects the demo staging app can inject, each with the verdict a
 * correct deletion-contract run must reach. The README table and the
 * reference suite are generated from this list.
 *
 * @module
 */

/** Injectable defects, in display order. */
export const DEFECTS = [
  "stale-cache",
  "vector-resurrect",
  "slow-vector",
  "soft-delete",
  "lost-control",
  "partial-inventory",
] as const;

/** One of {@link DEFECTS}. */
export type DemoDefect = typeof DEFECTS[number];

/** Default delay (ms) of the timed defects; shorter than the default 5 s deletion window. */
export const DEFAULT_DEFECT_DELAY_MS = 800;

/** Verdict a deletion-contract run reaches. */
export type ExpectedVerdict = "PASS" | "FAIL" | "INCONCLUSIVE";

/** What a defect does and what a run against it must conclude. */
export interface DefectInfo {
  /** One sentence: what goes wrong. */
  description: string;
  /** Verdict of a correct run against the demo with this defect. */
  verdict: ExpectedVerdict;
  /** Why that verdict follows. */
  reason: string;
  /** Whether cleanup can confirm that every synthetic record is gone. */
  cleanupComplete: boolean;
}

/** Expectations for the demo without any defect. */
export const HEALTHY: DefectInfo = {
  description:
    "Deletes source, vector and cached answers for exactly the supplied ids",
  verdict: "PASS",
  reason:
    "Every store is empty and the marker is gone from the first sample on",
  cleanupComplete: true,
};

/** Description and expected outcome per defect. */
export const DEFECT_INFO: Readonly<Record<DemoDefect, DefectInfo>> = {
  "stale-cache": {
    description:
      "Deletion never invalidates the answer cache, not even when repeated",
    verdict: "FAIL",
    reason:
      "The cached answer keeps returning the marker and cache_records stays at 1",
    cleanupComplete: false,
  },
  "vector-resurrect": {
    description:
      "A re-index job queued with the pre-deletion texts re-adds deleted vectors after the delay",
    verdict: "FAIL",
    reason:
      "Early samples are clean, but vector_records is back at the final sample",
    cleanupComplete: true,
  },
  "slow-vector": {
    description: "Vector deletion is applied only after the delay",
    verdict: "PASS",
    reason:
      "vector_records lingers for a while and reaches 0 inside the window (a transient residual)",
    cleanupComplete: true,
  },
  "soft-delete": {
    description:
      "Deletion only tombstones records, and search still reads tombstoned ones",
    verdict: "FAIL",
    reason:
      "Source and vector counts drop to 0, yet the query still returns the marker",
    cleanupComplete: false,
  },
  "lost-control": {
    description:
      "Deletion wipes every namespace of the tenant instead of the supplied ids",
    verdict: "INCONCLUSIVE",
    reason:
      "The unrelated control namespace loses its records, so no sample can be trusted",
    cleanupComplete: true,
  },
  "partial-inventory": {
    description:
      "Inventory reports complete: false, as when a store cannot be enumerated",
    verdict: "INCONCLUSIVE",
    reason: "Incomplete inventories are not usable observations",
    cleanupComplete: false,
  },
};

/** Narrows a string to a {@link DemoDefect}. */
export function isDemoDefect(name: string): name is DemoDefect {
  return (DEFECTS as readonly string[]).includes(name);
}
