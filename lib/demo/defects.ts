/**
 * Deletion defects the demo staging app can inject: each is a preset
 * {@link MemoryBehaviour} of the one memory pipeline, with the verdict a
 * correct deletion-contract run must reach. The reference suite lists every
 * preset as a system too, so these documented verdicts are checked on every
 * suite run.
 *
 * @module
 */

import { UsageError } from "../errors.ts";
import { quoteValue } from "../echo.ts";
import type { MemoryBehaviour } from "../memory/mod.ts";

/** Injectable defects, in display order. */
export const DEFECTS = [
  "stale-cache",
  "vector-resurrect",
  "slow-vector",
  "soft-delete",
  "lost-control",
  "move-to-control",
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
  /** Findings that prove the verdict, as `code:subject` (e.g. `residual_store:cache_records`). */
  findings: string[];
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
  findings: ["erased:deletion"],
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
    findings: ["residual_store:cache_records", "marker_retrievable:retrieval"],
    cleanupComplete: false,
  },
  "vector-resurrect": {
    description:
      "A re-index job queued with the pre-deletion texts re-adds deleted vectors after the delay",
    verdict: "FAIL",
    reason:
      "Early samples are clean, but vector_records is back at the final sample",
    findings: ["residual_store:vector_records"],
    cleanupComplete: true,
  },
  "slow-vector": {
    description: "Vector deletion is applied only after the delay",
    verdict: "PASS",
    reason:
      "vector_records lingers for a while and reaches 0 inside the window (a transient residual)",
    findings: ["transient_residual:vector_records"],
    cleanupComplete: true,
  },
  "soft-delete": {
    description:
      "Deletion only tombstones records, and search still reads tombstoned ones",
    verdict: "FAIL",
    reason:
      "Source and vector counts drop to 0, yet the query still returns the marker",
    findings: ["marker_retrievable:retrieval"],
    cleanupComplete: false,
  },
  "lost-control": {
    description:
      "Deletion wipes every namespace of the tenant instead of the supplied ids",
    verdict: "INCONCLUSIVE",
    reason:
      "The unrelated control namespace loses its records, so no sample can be trusted",
    findings: ["control_lost:control"],
    cleanupComplete: true,
  },
  "move-to-control": {
    description:
      "Deletion re-files the records under the tenant's newest other namespace, in a run the control, instead of removing them",
    verdict: "INCONCLUSIVE",
    reason:
      "The test namespace reads 0 and no answer carries the marker, but the control namespace counts the canaries beside its record, so the deletion may only have moved them",
    findings: ["control_grew:control"],
    cleanupComplete: false,
  },
  "partial-inventory": {
    description:
      "Inventory reports complete: false, as when a store cannot be enumerated",
    verdict: "INCONCLUSIVE",
    reason: "Incomplete inventories are not usable observations",
    findings: ["baseline_failed:baseline"],
    cleanupComplete: false,
  },
};

/**
 * A `--defect` value as `trace demo` and `trace quickstart` read it alike:
 * a defect, or `null` for `none` (the healthy app); `command` names the
 * help to see when the name is unknown.
 */
export function parseDefectFlag(
  name: string | undefined,
  command: string,
): DemoDefect | null {
  if (name === undefined || name === "none") return null;
  if (isDemoDefect(name)) return name;
  throw new UsageError(
    `Unknown --defect ${quoteValue(name)}; valid defects: none, ${
      DEFECTS.join(", ")
    } (see trace ${command} --help)`,
  );
}

/** Narrows a string to a {@link DemoDefect}. */
export function isDemoDefect(name: string): name is DemoDefect {
  return (DEFECTS as readonly string[]).includes(name);
}

/**
 * The pipeline behaviour of the demo with `defect` (`null`: healthy). Every
 * preset runs a repair re-index `delayMs` after each deletion that re-reads
 * the live source, so only `vector-resurrect`, which reads a stale copy,
 * brings anything back.
 */
export function demoBehaviour(
  defect: DemoDefect | null,
  delayMs: number = DEFAULT_DEFECT_DELAY_MS,
): MemoryBehaviour {
  if (!Number.isSafeInteger(delayMs) || delayMs < 0) {
    throw new RangeError(
      `Cannot build the demo behaviour: delayMs must be a non-negative integer, got ${delayMs}`,
    );
  }
  const healthy: MemoryBehaviour = {
    repairReindex: { afterMs: delayMs, texts: "live" },
  };
  switch (defect) {
    case null:
      return healthy;
    case "stale-cache":
      return { ...healthy, cacheInvalidation: false };
    case "vector-resurrect":
      return { repairReindex: { afterMs: delayMs, texts: "snapshot" } };
    case "slow-vector":
      return { ...healthy, vectorDelayMs: delayMs };
    case "soft-delete":
      return {
        ...healthy,
        deletion: "tombstone",
        searchTombstoned: true,
        inventoryCountsTombstones: false,
      };
    case "lost-control":
      return { ...healthy, deletionScope: "tenant" };
    case "move-to-control":
      return { ...healthy, deletion: "move" };
    case "partial-inventory":
      return { ...healthy, inventoryComplete: false };
  }
  // Reached only by a caller that cast a string it did not check with isDemoDefect.
  throw new RangeError(
    `Cannot build the demo behaviour: unknown defect ${
      quoteValue(String(defect))
    }; expected one of ${DEFECTS.join(", ")}`,
  );
}
