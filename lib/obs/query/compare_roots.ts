/**
 * Structural differences between two roots' events (a baseline and a
 * candidate): how many events of each kind, where their kind sequences part,
 * which refs each lineage lane holds on one side only, what each selection
 * kept or dropped, and which analysis findings only one side has. Metadata
 * only, and nothing is executed: the comparison reads what was recorded.
 *
 * @module
 */

import type { TraceEvent } from "../model.ts";
import {
  analyzeTrace,
  LINEAGE_LANES,
  type LineageLane,
  traceLineage,
} from "./lineage.ts";

/** Most ref keys listed per side of a difference. */
export const MAX_COMPARE_REFS = 50;

/** A count on both sides. */
export interface SideCounts {
  baseline: number;
  candidate: number;
}

/** Refs on one side only, and how many both share. */
export interface RefDifference {
  only_baseline: string[];
  only_candidate: string[];
  both: number;
  /** True when a side listed more than {@link MAX_COMPARE_REFS} refs. */
  truncated: boolean;
}

/** Structural differences between two roots. */
export interface RootComparison {
  identical: boolean;
  events: SideCounts;
  errors: SideCounts;
  /** Span from the first start to the last end, in ms. */
  duration_ms: { baseline: number | null; candidate: number | null };
  /** Every kind either side has, by name, with `changed` when the counts differ. */
  kinds: (SideCounts & { kind: string; changed: boolean })[];
  /** Where the kind sequences (oldest first) first differ; `null` when they do not. */
  first_divergence:
    | { index: number; baseline: string | null; candidate: string | null }
    | null;
  lanes: Record<LineageLane, RefDifference>;
  selections: {
    events: SideCounts;
    candidates: SideCounts;
    /** Refs kept by a selection on one side only. */
    selected: RefDifference;
    /** Candidates dropped, by reason. */
    rejected_by_reason: (SideCounts & { reason: string })[];
  };
  findings: {
    only_baseline: string[];
    only_candidate: string[];
    both: string[];
  };
}

const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function chronological(events: readonly TraceEvent[]): TraceEvent[] {
  return [...events].sort((a, b) =>
    Date.parse(a.ts) - Date.parse(b.ts) || a.seq - b.seq
  );
}

function refDifference(a: Set<string>, b: Set<string>): RefDifference {
  const onlyA = [...a].filter((k) => !b.has(k)).sort(byName);
  const onlyB = [...b].filter((k) => !a.has(k)).sort(byName);
  return {
    only_baseline: onlyA.slice(0, MAX_COMPARE_REFS),
    only_candidate: onlyB.slice(0, MAX_COMPARE_REFS),
    both: [...a].filter((k) => b.has(k)).length,
    truncated: onlyA.length > MAX_COMPARE_REFS ||
      onlyB.length > MAX_COMPARE_REFS,
  };
}

function tally(values: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return counts;
}

function sideCounts(
  a: Map<string, number>,
  b: Map<string, number>,
): (SideCounts & { name: string })[] {
  return [...new Set([...a.keys(), ...b.keys()])].sort(byName).map((name) => ({
    name,
    baseline: a.get(name) ?? 0,
    candidate: b.get(name) ?? 0,
  }));
}

function span(events: readonly TraceEvent[]): number | null {
  if (events.length === 0) return null;
  const starts = events.map((e) => Date.parse(e.started_at ?? e.ts));
  const ends = events.map((e) =>
    Date.parse(e.ended_at ?? e.started_at ?? e.ts)
  );
  return Math.max(...ends) - Math.min(...starts);
}

function divergence(
  a: readonly TraceEvent[],
  b: readonly TraceEvent[],
): RootComparison["first_divergence"] {
  const length = Math.max(a.length, b.length);
  for (let i = 0; i < length; i++) {
    if (a[i]?.kind !== b[i]?.kind) {
      return {
        index: i,
        baseline: a[i]?.kind ?? null,
        candidate: b[i]?.kind ?? null,
      };
    }
  }
  return null;
}

function selectionFacts(events: readonly TraceEvent[]) {
  const candidates = events.flatMap((e) => e.selection?.candidates ?? []);
  return {
    events: events.filter((e) => e.selection).length,
    candidates: candidates.length,
    selected: new Set(
      candidates.filter((c) => c.selected).map((c) =>
        `${c.ref.type}:${c.ref.id}`
      ),
    ),
    rejected: tally(candidates.filter((c) => !c.selected).map((c) => c.reason)),
  };
}

/** Compares the events of two roots (each read on its own). */
export function compareRoots(
  baseline: readonly TraceEvent[],
  candidate: readonly TraceEvent[],
): RootComparison {
  const a = chronological(baseline);
  const b = chronological(candidate);
  const lineageA = traceLineage(a);
  const lineageB = traceLineage(b);
  const keys = (refs: { type: string; id: string }[]) =>
    new Set(refs.map((r) => `${r.type}:${r.id}`));
  const lanes = Object.fromEntries(LINEAGE_LANES.map((lane) => [
    lane,
    refDifference(keys(lineageA.lanes[lane]), keys(lineageB.lanes[lane])),
  ])) as Record<LineageLane, RefDifference>;
  const selA = selectionFacts(a);
  const selB = selectionFacts(b);
  const codesA = new Set(analyzeTrace(a).map((f) => f.code));
  const codesB = new Set(analyzeTrace(b).map((f) => f.code));
  const kinds = sideCounts(
    tally(a.map((e) => e.kind)),
    tally(b.map((e) => e.kind)),
  )
    .map(({ name, ...counts }) => ({
      kind: name,
      ...counts,
      changed: counts.baseline !== counts.candidate,
    }));
  const comparison: Omit<RootComparison, "identical"> = {
    events: { baseline: a.length, candidate: b.length },
    errors: {
      baseline: a.filter((e) => e.status === "error").length,
      candidate: b.filter((e) => e.status === "error").length,
    },
    duration_ms: { baseline: span(a), candidate: span(b) },
    kinds,
    first_divergence: divergence(a, b),
    lanes,
    selections: {
      events: { baseline: selA.events, candidate: selB.events },
      candidates: { baseline: selA.candidates, candidate: selB.candidates },
      selected: refDifference(selA.selected, selB.selected),
      rejected_by_reason: sideCounts(selA.rejected, selB.rejected).map((
        { name, ...counts },
      ) => ({ reason: name, ...counts })),
    },
    findings: {
      only_baseline: [...codesA].filter((c) => !codesB.has(c)).sort(byName),
      only_candidate: [...codesB].filter((c) => !codesA.has(c)).sort(byName),
      both: [...codesA].filter((c) => codesB.has(c)).sort(byName),
    },
  };
  return { identical: isIdentical(comparison), ...comparison };
}

function isIdentical(c: Omit<RootComparison, "identical">): boolean {
  const sameLanes = LINEAGE_LANES.every((lane) =>
    c.lanes[lane].only_baseline.length === 0 &&
    c.lanes[lane].only_candidate.length === 0
  );
  return c.first_divergence === null && sameLanes &&
    c.errors.baseline === c.errors.candidate &&
    c.kinds.every((k) => !k.changed) &&
    c.selections.selected.only_baseline.length === 0 &&
    c.selections.selected.only_candidate.length === 0 &&
    c.selections.rejected_by_reason.every((r) => r.baseline === r.candidate) &&
    c.findings.only_baseline.length === 0 &&
    c.findings.only_candidate.length === 0;
}
