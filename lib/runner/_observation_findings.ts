/**
 * What makes the observation itself untrustworthy, whatever the residuals
 * showed: request errors, inventories that answered `complete: false`, and a
 * control record that went missing. Each is INCONCLUSIVE, because a verdict
 * on evidence the adapter could not give, or on a deletion that reached the
 * control, would not say whether the test record was forgotten.
 *
 * @module
 */

import { finding, secondsLabel } from "./_finding.ts";
import type { Finding, Sample } from "./report.ts";

/** Request errors and incomplete inventories, test and control. */
export function observationFindings(samples: Sample[]): Finding[] {
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

/** A control record no longer counted or retrievable. */
export function controlFindings(samples: Sample[]): Finding[] {
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
