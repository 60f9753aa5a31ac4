/**
 * How one sample found the run's control namespace, said the same way by
 * the finding, the progress line, the text report and the run page: its
 * record still there (`ok`), gone (`lost`), more source or vector records
 * than the baseline counted (`grew`: nothing but the application writes
 * records there after the runner's control record, so the deletion may
 * have moved the canaries into it), or not readable (`unknown`).
 *
 * @module
 */

import type { Store } from "../contract/protocol.ts";
import type { InventoryCounts, Sample } from "./report.ts";

/** What a sample showed of the control namespace. */
export type ControlState = "ok" | "lost" | "grew" | "unknown";

/**
 * The stores whose growth in the control namespace can only be records
 * written there: moved documents land in the source and vector stores.
 * The cache is left out, since the runner's own control queries fill it
 * (an answer cached after it was served, or once per index generation).
 */
export const RECORD_STORES = [
  "source_records",
  "vector_records",
] as const satisfies readonly Store[];

/** The record stores a sample's complete control inventory counts more in than the baseline's complete one. */
export function grownStores(
  sample: Pick<Sample, "control_inventory">,
  before: InventoryCounts | null,
): Store[] {
  const after = sample.control_inventory;
  if (!before?.complete || !after?.complete) return [];
  return RECORD_STORES.filter((store) => after[store] > before[store]);
}

/** Whether `sample` no longer counted the control record or no longer retrieved it. */
export function controlLost(
  sample: Pick<Sample, "control_present" | "control_seen">,
): boolean {
  return sample.control_present === false || sample.control_seen === false;
}

/**
 * The control's state in `sample`, against `baselineControl`, the control
 * inventory read before the deletion. A lost record outranks growth: both
 * make the run INCONCLUSIVE, and a loss says more about the deletion.
 */
export function controlState(
  sample: Pick<
    Sample,
    "control_present" | "control_seen" | "control_inventory"
  >,
  baselineControl: InventoryCounts | null,
): ControlState {
  if (controlLost(sample)) return "lost";
  if (sample.control_present === null || sample.control_seen === null) {
    return "unknown";
  }
  return grownStores(sample, baselineControl).length > 0 ? "grew" : "ok";
}

/** The state as a samples table and a progress line show it: a problem in capitals. */
export function controlWord(state: ControlState): string {
  return state === "lost" || state === "grew" ? state.toUpperCase() : state;
}
