/**
 * What makes the observation itself untrustworthy, whatever the residuals
 * showed: request errors, inventories that answered `complete: false`, a
 * control record that went missing, and a control namespace that holds more
 * records after the deletion than before it. Each is INCONCLUSIVE, because a
 * verdict on evidence the adapter could not give, or on a deletion that
 * reached the control, would not say whether the test record was forgotten.
 *
 * @module
 */

import type { Store } from "../contract/protocol.ts";
import { joinAnd } from "../words.ts";
import { finding, secondsLabel } from "./_finding.ts";
import { controlLost, grownStores, RECORD_STORES } from "./control_state.ts";
import type { Finding, InventoryCounts, Sample } from "./report.ts";

/** Request errors and incomplete inventories, test and control. */
export function observationFindings(samples: Sample[]): Finding[] {
  const findings: Finding[] = [];
  const failed = samples.filter((s) => s.errors.length > 0);
  if (failed.length > 0) {
    const first = failed[0]!;
    const error = first.errors[0]!;
    findings.push(
      finding({
        severity: "inconclusive",
        code: "request_error",
        subject: "observation",
        message:
          `${failed.length} of ${samples.length} sample(s) had request errors; first at ${
            secondsLabel(first.started_at_seconds)
          }: ${error.message}`,
        samples: failed.map((s) => s.index),
      }),
    );
  }
  const incomplete = samples.filter((s) =>
    s.inventory !== null && !s.inventory.complete
  );
  if (incomplete.length > 0) {
    findings.push(
      finding({
        severity: "inconclusive",
        code: "inventory_incomplete",
        subject: "inventory",
        message:
          `The test inventory answered complete: false in ${incomplete.length} sample(s), so those counts cannot prove erasure`,
        samples: incomplete.map((s) => s.index),
      }),
    );
  }
  const controlUnknown = samples.filter((s) =>
    s.control_present === null &&
    !s.errors.some((e) => e.namespace === "control" && e.op === "inventory")
  );
  if (controlUnknown.length > 0) {
    findings.push(
      finding({
        severity: "inconclusive",
        code: "control_inventory_incomplete",
        subject: "control",
        message:
          `The control inventory answered complete: false in ${controlUnknown.length} sample(s), so the control cannot be shown intact`,
        samples: controlUnknown.map((s) => s.index),
      }),
    );
  }
  return findings;
}

/**
 * A control record no longer counted or retrievable, and a control
 * namespace that counts more than `baselineControl`, the baseline's control
 * inventory (the last one read before the deletion).
 */
export function controlFindings(
  samples: Sample[],
  baselineControl: InventoryCounts | null,
): Finding[] {
  const grew = controlGrowthFinding(samples, baselineControl);
  const lost = controlLossFinding(samples);
  return [...(lost ? [lost] : []), ...(grew ? [grew] : [])];
}

function controlLossFinding(samples: Sample[]): Finding | null {
  const lost = samples.filter(controlLost);
  if (lost.length === 0) return null;
  const first = lost[0]!;
  const what = first.control_present === false
    ? "no longer counted in its inventory"
    : "no longer retrievable";
  return finding({
    severity: "inconclusive",
    code: "control_lost",
    subject: "control",
    message: `The control record was ${what} at ${
      secondsLabel(first.started_at_seconds)
    }: the deletion reached data outside the test namespace, or the adapter misreports the control, so the result cannot be trusted`,
    samples: lost.map((s) => s.index),
  });
}

/**
 * Nothing but the application writes records to the run's control
 * namespace after the runner's one control record, so more source or
 * vector records there after the deletion mean it moved or copied data
 * rather than removing it. Only INCONCLUSIVE: the counts cannot show the
 * extra records are the canaries (when the control query returns their
 * marker, retrieval already FAILs).
 */
function controlGrowthFinding(
  samples: Sample[],
  before: InventoryCounts | null,
): Finding | null {
  const grown = samples.flatMap((sample) => {
    const stores = grownStores(sample, before);
    return stores.length > 0 ? [{ sample, stores }] : [];
  });
  const first = grown[0];
  if (!first || !before) return null;
  const growth = RECORD_STORES.flatMap((store) => {
    const counts = grown.filter((g) => g.stores.includes(store))
      .map((g) => g.sample.control_inventory![store]);
    return counts.length > 0 ? [storeGrowth(store, before[store], counts)] : [];
  });
  return finding({
    severity: "inconclusive",
    code: "control_grew",
    subject: "control",
    message:
      `The control namespace counted more source or vector records after the deletion than at the baseline, first at ${
        secondsLabel(first.sample.started_at_seconds)
      } and in ${grown.length} of ${samples.length} sample(s): ${
        joinAnd(growth)
      }; the deletion may have moved or copied the deleted records into another namespace instead of erasing them, so the result cannot be trusted`,
    samples: grown.map((g) => g.sample.index),
  });
}

/** "source_records from 1 to 4", "as many as 4" when the grown counts differ. */
function storeGrowth(store: Store, before: number, counts: number[]): string {
  const most = Math.max(...counts);
  const after = counts.every((count) => count === most)
    ? `${most}`
    : `as many as ${most}`;
  return `${store} from ${before} to ${after}`;
}
