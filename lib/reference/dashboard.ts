/**
 * Dashboard and ranking data: a matrix of reference systems × assertion
 * families (each store, retrieval, control, cleanup) with the verdict, the
 * time to erasure per store and expected versus observed, and a ranking of
 * the systems by the strength of their deletion guarantee.
 *
 * @module
 */

import { STORES } from "../contract/protocol.ts";
import type { RunReport, Sample } from "../runner/report.ts";
import { controlState } from "../runner/control_state.ts";
import type { Evaluation } from "./evaluate.ts";
import type { ReferenceSystemSpec } from "./systems.ts";

/** Columns of the matrix. */
export const FAMILIES = [
  "source_records",
  "vector_records",
  "cache_records",
  "retrieval",
  "control",
  "cleanup",
] as const;

/** One of {@link FAMILIES}. */
export type Family = typeof FAMILIES[number];

/** State of one family in one run. */
export type FamilyStatus =
  | "erased"
  | "transient"
  | "residual"
  | "intact"
  | "lost"
  | "grew"
  | "complete"
  | "incomplete"
  | "interrupted"
  | "unknown";

/** One cell of the matrix. */
export interface FamilyCell {
  status: FamilyStatus;
  /** Seconds after the acknowledgement from which the store stayed 0; stores and retrieval only. */
  time_to_erasure_seconds: number | null;
}

/** One row of the matrix: a system and its latest run. */
export interface DashboardRow {
  system: string;
  title: string;
  run_id: string;
  started_at: string;
  verdict: RunReport["verdict"];
  expected: string;
  observed: string;
  matches: boolean;
  mismatches: string[];
  /** What the contract cannot see on this system; the row is flagged when set. */
  blind_spot: string | null;
  families: Record<Family, FamilyCell>;
  /** Slowest time to erasure over stores and retrieval; `null` when something never cleared. */
  slowest_erasure_seconds: number | null;
}

type Series = (number | null)[];

function seriesOf(samples: Sample[], family: Family): Series {
  if (family === "retrieval") {
    return samples.map((s) =>
      s.marker_seen === null ? null : s.marker_seen ? 1 : 0
    );
  }
  const store = family as typeof STORES[number];
  return samples.map((s) => (s.inventory ? s.inventory[store] : null));
}

/** Seconds of the first sample from which `series` stayed 0 to the end; `null` if it never did. */
export function timeToErasure(
  samples: Sample[],
  series: Series,
): number | null {
  let from = -1;
  for (let i = series.length - 1; i >= 0 && series[i] === 0; i--) from = i;
  return from < 0 ? null : samples[from]!.started_at_seconds;
}

function storeCell(
  report: RunReport,
  family: Family,
): FamilyCell {
  const { samples } = report;
  const series = seriesOf(samples, family);
  const time = timeToErasure(samples, series);
  const last = series.at(-1);
  let status: FamilyStatus;
  // Without a final sample nothing was decided, whatever the last one showed.
  if (report.state === "interrupted") status = "interrupted";
  else if (series.length === 0 || last === null || last === undefined) {
    status = "unknown";
  } else if (last > 0) status = "residual";
  else if (series.some((v) => v !== null && v > 0)) status = "transient";
  else status = "erased";
  return {
    status,
    time_to_erasure_seconds: status === "interrupted" ? null : time,
  };
}

function controlCell(report: RunReport): FamilyCell {
  const states = report.samples.map((s) =>
    controlState(s, report.baseline.control_inventory)
  );
  const status = states.includes("lost")
    ? "lost"
    : states.includes("grew")
    ? "grew"
    : states.length > 0 && states.every((state) => state === "ok")
    ? "intact"
    : "unknown";
  return { status, time_to_erasure_seconds: null };
}

/** Builds the matrix row of one run of `spec`. */
export function dashboardRow(
  spec: ReferenceSystemSpec,
  report: RunReport,
  evaluation: Evaluation,
): DashboardRow {
  const families = {} as Record<Family, FamilyCell>;
  for (const family of FAMILIES) {
    if (family === "control") families[family] = controlCell(report);
    else if (family === "cleanup") {
      families[family] = {
        status: report.cleanup.cleanup_complete ? "complete" : "incomplete",
        time_to_erasure_seconds: null,
      };
    } else families[family] = storeCell(report, family);
  }
  const times = ([
    "source_records",
    "vector_records",
    "cache_records",
    "retrieval",
  ] as const)
    .map((f) => families[f].time_to_erasure_seconds);
  return {
    system: spec.name,
    title: spec.title,
    run_id: report.run_id,
    started_at: report.started_at,
    verdict: report.verdict,
    expected: evaluation.expected,
    observed: evaluation.observed,
    matches: evaluation.matches,
    mismatches: evaluation.mismatches,
    blind_spot: spec.blind_spot,
    families,
    slowest_erasure_seconds: times.some((t) => t === null)
      ? null
      : Math.max(...times as number[]),
  };
}

/** Tiers of deletion guarantee, strongest first. */
export const TIERS = [
  "immediate_erasure",
  "erasure_inside_window",
  "blind_spot",
  "inconclusive",
  "fail",
] as const;

/** One of {@link TIERS}. */
export type Tier = typeof TIERS[number];

/** The ranking rule, printed with every ranking. */
export const RANKING_RULE =
  "Ranked by deletion guarantee: immediate erasure > erasure inside the window (transient residual) > PASS with a documented blind spot > INCONCLUSIVE > FAIL; ties go to the faster slowest time to erasure, then to the name";

/** One ranked system. */
export interface RankedSystem {
  rank: number;
  system: string;
  tier: Tier;
  verdict: RunReport["verdict"];
  observed: string;
  slowest_erasure_seconds: number | null;
  run_id: string;
}

/** The tier a row falls in. */
export function tierOf(row: DashboardRow): Tier {
  if (row.verdict === "FAIL") return "fail";
  if (row.verdict === "INCONCLUSIVE") return "inconclusive";
  if (row.blind_spot !== null) return "blind_spot";
  const transient = FAMILIES.some((f) =>
    row.families[f].status === "transient"
  );
  return transient ? "erasure_inside_window" : "immediate_erasure";
}

/** Orders rows by tier, then slowest time to erasure (unknown last), then name. */
export function rankSystems(rows: readonly DashboardRow[]): RankedSystem[] {
  const keyed = rows.map((row) => ({ row, tier: tierOf(row) }));
  keyed.sort((a, b) =>
    TIERS.indexOf(a.tier) - TIERS.indexOf(b.tier) ||
    timeKey(a.row) - timeKey(b.row) ||
    (a.row.system < b.row.system ? -1 : a.row.system > b.row.system ? 1 : 0)
  );
  return keyed.map(({ row, tier }, i) => ({
    rank: i + 1,
    system: row.system,
    tier,
    verdict: row.verdict,
    observed: row.observed,
    slowest_erasure_seconds: row.slowest_erasure_seconds,
    run_id: row.run_id,
  }));
}

function timeKey(row: DashboardRow): number {
  return row.slowest_erasure_seconds ?? Number.POSITIVE_INFINITY;
}
