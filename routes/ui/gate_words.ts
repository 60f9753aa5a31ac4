/**
 * How the pages show the gate over enforced regressions: one decision for
 * the overview's gate line and the regressions page's head, so the two never
 * disagree. The gate itself (`external-gate`, `ok: true` with nothing
 * enforced) passes when no enforced regression fails; a page says PASS only
 * when something was enforced and held, and UNKNOWN while nothing is
 * enforced yet, pending regressions or not.
 *
 * @module
 */

import { recurrenceOutcome } from "../../lib/ledger/recurrence.ts";
import type { GateFailure, GateResult } from "../../lib/ledger/regressions.ts";
import { gate } from "../../lib/runs/mod.ts";
import type { RunSource } from "./run_view.ts";
import { plural } from "./trace_words.ts";

/**
 * The gate as the pages judge it: with the data directory's checkpoints, so
 * a replay killed before it finished is its regression's latest here as in
 * `external-gate`; a completed run the ledger lacks is named on the run
 * pages instead of refusing the page.
 */
export async function pageGate(source: RunSource): Promise<GateResult> {
  return await gate(
    source.db,
    undefined,
    source.dataDir === null
      ? {}
      : { dataDir: source.dataDir, refuseUnrecorded: false },
  );
}

/** What the gate's display rests on. */
export type GateState =
  /** No ledger, or no regression saved. */
  | "none"
  /** Saved regressions, all pending: nothing is known to be fixed. */
  | "pending_only"
  /** Every enforced regression passed its latest replay. */
  | "pass"
  /** An enforced regression did not pass its latest replay. */
  | "fail";

/** The gate as a page shows it. */
export interface GateDisplay {
  state: GateState;
  /** The badge's status: `unknown`, `pass` or `fail`. */
  status: "unknown" | "pass" | "fail";
  /** Its state and why, in one sentence. */
  sentence: string;
}

/** The gate `gate` (`null` without a ledger) as pages show it. */
export function gateDisplay(gate: GateResult | null): GateDisplay {
  const state = gateState(gate);
  return {
    state,
    status: state === "pass" ? "pass" : state === "fail" ? "fail" : "unknown",
    sentence: gateSentence(gate, state),
  };
}

function gateState(gate: GateResult | null): GateState {
  if (!gate || gate.enforced + gate.pending === 0) return "none";
  if (!gate.ok) return "fail";
  return gate.enforced === 0 ? "pending_only" : "pass";
}

function gateSentence(gate: GateResult | null, state: GateState): string {
  const pending = (n: number) =>
    n > 0 ? `; ${n} pending (known open ${n === 1 ? "bug" : "bugs"})` : "";
  switch (state) {
    case "none":
      return "No regressions saved yet: a saved FAIL becomes a pending regression, and its first passing replay enforces it.";
    case "pending_only":
      return `Nothing enforced yet: ${gate!.pending} pending regression${
        gate!.pending === 1 ? " is a known open bug" : "s are known open bugs"
      }; a passing replay enforces each.`;
    case "fail": {
      const failing = gate!.failing;
      const unfinished = failing
        .filter((f) => f.last_state !== "completed")
        .map((f) => f.regression_id);
      const why = [
        ...completedWhy(failing.filter((f) => f.last_state === "completed")),
        unfinished.length > 0
          ? `${
            unfinished.join(", ")
          }: the latest replay did not finish; clean up what it left and replay again`
          : null,
      ].filter((part) => part !== null).join("; ");
      return `${failing.length} of ${
        plural(gate!.enforced, "enforced regression")
      } did not pass the latest replay (${why})${pending(gate!.pending)}.`;
    }
    case "pass":
      return `${
        gate!.enforced === 1
          ? "The 1 enforced regression passed its"
          : `All ${gate!.enforced} enforced regressions passed their`
      } latest replay${pending(gate!.pending)}.`;
  }
}

/**
 * Failing regressions whose latest replay completed, grouped by what it
 * showed of the saved failure: "reg-a, reg-b: the saved failure came back".
 */
function completedWhy(failing: readonly GateFailure[]): string[] {
  const groups = new Map<string, string[]>();
  for (const failure of failing) {
    const words = failure.recurrence
      ? recurrenceOutcome(failure.recurrence)
      : "open its latest replay to see whether the saved failure recurred";
    groups.set(words, [
      ...groups.get(words) ?? [],
      failure.regression_id,
    ]);
  }
  return [...groups].map(([words, ids]) => `${ids.join(", ")}: ${words}`);
}
