/**
 * Lineage of one root trace and a deterministic analysis of it, computed
 * from metadata only (resource refs with their roles, selection candidates,
 * statuses, outcomes): which refs were expected, retrieved, supplied and
 * bound to the output, and where those lanes disagree. Model or prose claims
 * are never evidence; only explicit refs are. The same events always give
 * the same answer, in the same order.
 *
 * @module
 */

import type { ResourceRef, TraceEvent } from "../model.ts";

/** The lanes of the lineage. */
export const LINEAGE_LANES = [
  "expected",
  "retrieved",
  "supplied",
  "output_bound",
] as const;

/** One of {@link LINEAGE_LANES}. */
export type LineageLane = typeof LINEAGE_LANES[number];

/** A ref as it appears in one lane. */
export interface LineageRef {
  type: string;
  id: string;
  /** Versions seen in this lane, sorted. */
  versions: string[];
  /** Events that placed it in this lane (the first few, in time order). */
  event_ids: string[];
  /** How many events placed it in this lane. */
  events: number;
}

/** A selection candidate that was not kept. */
export interface RejectedCandidate {
  type: string;
  id: string;
  version: string | null;
  reason: string;
  rank: number | null;
  score: number | null;
  event_id: string;
}

/** The lineage of a root trace. */
export interface Lineage {
  lanes: Record<LineageLane, LineageRef[]>;
  /** True when a lane listed more refs than {@link MAX_LANE_REFS}. */
  lanes_truncated: boolean;
  /** Artifact types an intent declared it expected (`intent.expected_artifact_types`). */
  expected_artifact_types: string[];
  rejected_candidates: RejectedCandidate[];
}

/** Severity of an analysis finding. */
export type AnalysisSeverity = "problem" | "warning" | "info";

/** One conclusion of the analysis, with the refs and events behind it. */
export interface AnalysisFinding {
  code: string;
  severity: AnalysisSeverity;
  message: string;
  refs: string[];
  event_ids: string[];
}

/** Most refs listed per lane. */
export const MAX_LANE_REFS = 64;
const MAX_EVENT_IDS = 5;
const MAX_LISTED = 20;

interface Placement {
  ref: ResourceRef;
  event: TraceEvent;
  at: number;
}

const keyOf = (ref: { type: string; id: string }) => `${ref.type}:${ref.id}`;
const byKey = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Events in time order (seq breaks ties), as the analysis reads them. */
function chronological(events: readonly TraceEvent[]): TraceEvent[] {
  return [...events].sort((a, b) =>
    Date.parse(a.ts) - Date.parse(b.ts) || a.seq - b.seq
  );
}

/** Every (lane, ref, event) the events record; candidates are retrieved, selected ones supplied. */
function placements(events: TraceEvent[]): Map<string, Placement[]> {
  const lanes = new Map<string, Placement[]>();
  const put = (
    lane: string,
    ref: ResourceRef,
    event: TraceEvent,
    at: number,
  ) => {
    const list = lanes.get(lane);
    if (list) list.push({ ref, event, at });
    else lanes.set(lane, [{ ref, event, at }]);
  };
  events.forEach((event, at) => {
    for (const ref of event.resources) {
      const role = ref.role ??
        (event.kind === "memory_delete" ? "deleted" : undefined);
      if (role !== undefined) put(role, ref, event, at);
    }
    for (const candidate of event.selection?.candidates ?? []) {
      put("retrieved", candidate.ref, event, at);
      if (candidate.selected) put("supplied", candidate.ref, event, at);
    }
  });
  return lanes;
}

function laneRefs(list: Placement[]): LineageRef[] {
  const grouped = new Map<string, LineageRef>();
  for (const { ref, event } of list) {
    const key = keyOf(ref);
    const entry = grouped.get(key) ??
      { type: ref.type, id: ref.id, versions: [], event_ids: [], events: 0 };
    if (ref.version !== undefined && !entry.versions.includes(ref.version)) {
      entry.versions.push(ref.version);
    }
    if (
      entry.event_ids.length < MAX_EVENT_IDS &&
      !entry.event_ids.includes(event.event_id)
    ) entry.event_ids.push(event.event_id);
    entry.events++;
    grouped.set(key, entry);
  }
  return [...grouped.entries()]
    .sort(([a], [b]) => byKey(a, b))
    .map(([, entry]) => ({ ...entry, versions: entry.versions.sort(byKey) }));
}

function rejected(events: TraceEvent[]): RejectedCandidate[] {
  return events.flatMap((event) =>
    (event.selection?.candidates ?? [])
      .filter((c) => !c.selected)
      .map((c) => ({
        type: c.ref.type,
        id: c.ref.id,
        version: c.ref.version ?? null,
        reason: c.reason,
        rank: c.rank ?? null,
        score: c.score ?? null,
        event_id: event.event_id,
      }))
  ).slice(0, MAX_LANE_REFS);
}

function expectedTypes(events: TraceEvent[]): string[] {
  const types = new Set<string>();
  for (const event of events) {
    const value = event.attributes["intent.expected_artifact_types"];
    if (typeof value !== "string") continue;
    for (const type of value.split(",")) {
      if (type.trim() !== "") types.add(type.trim());
    }
  }
  return [...types].sort(byKey);
}

/** The lineage of the events of one root trace. */
export function traceLineage(events: readonly TraceEvent[]): Lineage {
  const ordered = chronological(events);
  const placed = placements(ordered);
  let truncated = false;
  const lanes = Object.fromEntries(LINEAGE_LANES.map((lane) => {
    const refs = laneRefs(placed.get(lane) ?? []);
    if (refs.length > MAX_LANE_REFS) truncated = true;
    return [lane, refs.slice(0, MAX_LANE_REFS)];
  })) as Record<LineageLane, LineageRef[]>;
  return {
    lanes,
    lanes_truncated: truncated,
    expected_artifact_types: expectedTypes(ordered),
    rejected_candidates: rejected(ordered),
  };
}

function finding(
  code: string,
  severity: AnalysisSeverity,
  message: string,
  refs: Iterable<string>,
  eventIds: Iterable<string> = [],
): AnalysisFinding {
  return {
    code,
    severity,
    message,
    refs: [...new Set(refs)].sort(byKey).slice(0, MAX_LISTED),
    event_ids: [...new Set(eventIds)].slice(0, MAX_LISTED),
  };
}

function keys(list: Placement[] | undefined): Set<string> {
  return new Set((list ?? []).map((p) => keyOf(p.ref)));
}

/** Refs used (retrieved, supplied or bound to output) after an event deleted them. */
function deletedThenUsed(placed: Map<string, Placement[]>): AnalysisFinding[] {
  const deletedAt = new Map<string, number>();
  for (const p of placed.get("deleted") ?? []) {
    const key = keyOf(p.ref);
    if (!deletedAt.has(key)) deletedAt.set(key, p.at);
  }
  const uses = ["retrieved", "supplied", "output_bound"].flatMap((lane) =>
    placed.get(lane) ?? []
  ).filter((p) => {
    const at = deletedAt.get(keyOf(p.ref));
    return at !== undefined && p.at > at;
  });
  if (uses.length === 0) return [];
  const refs = new Set(uses.map((p) => keyOf(p.ref)));
  return [finding(
    "deleted_then_used",
    "problem",
    `${refs.size} ref(s) were retrieved, supplied or bound to the output after an event of this trace deleted them`,
    refs,
    uses.map((p) => p.event.event_id),
  )];
}

function laneGaps(placed: Map<string, Placement[]>): AnalysisFinding[] {
  const expected = keys(placed.get("expected"));
  const retrieved = keys(placed.get("retrieved"));
  const supplied = keys(placed.get("supplied"));
  const output = keys(placed.get("output_bound"));
  const minus = (a: Set<string>, ...others: Set<string>[]) =>
    [...a].filter((k) => !others.some((o) => o.has(k)));
  const found: AnalysisFinding[] = [];
  const unsupported = minus(output, supplied, retrieved);
  if (unsupported.length > 0) {
    found.push(finding(
      "output_bound_not_supplied",
      "problem",
      `${unsupported.length} ref(s) are bound to the output but no event shows them retrieved or supplied`,
      unsupported,
    ));
  }
  const missing = minus(expected, retrieved, supplied);
  if (missing.length > 0) {
    found.push(finding(
      "expected_not_retrieved",
      "warning",
      `${missing.length} expected ref(s) were never retrieved or supplied`,
      missing,
    ));
  }
  const dropped = minus(expected, supplied).filter((k) => retrieved.has(k));
  if (dropped.length > 0) {
    found.push(finding(
      "expected_not_supplied",
      "warning",
      `${dropped.length} expected ref(s) were retrieved but not supplied (see rejected_candidates for the reasons)`,
      dropped,
    ));
  }
  const unused = minus(supplied, output);
  if (unused.length > 0 && output.size > 0) {
    found.push(finding(
      "supplied_not_output_bound",
      "info",
      `${unused.length} supplied ref(s) are not bound to the output`,
      unused,
    ));
  }
  return found;
}

function versionMismatches(
  placed: Map<string, Placement[]>,
): AnalysisFinding[] {
  const expected = new Map<string, Set<string>>();
  for (const p of placed.get("expected") ?? []) {
    if (p.ref.version === undefined) continue;
    const key = keyOf(p.ref);
    expected.set(key, (expected.get(key) ?? new Set()).add(p.ref.version));
  }
  const off = ["supplied", "output_bound"].flatMap((lane) =>
    placed.get(lane) ?? []
  ).filter((p) => {
    const versions = expected.get(keyOf(p.ref));
    return versions !== undefined && p.ref.version !== undefined &&
      !versions.has(p.ref.version);
  });
  if (off.length === 0) return [];
  return [finding(
    "version_mismatch",
    "warning",
    "a ref was supplied or bound to the output in a version other than the one expected",
    off.map((p) => keyOf(p.ref)),
    off.map((p) => p.event.event_id),
  )];
}

function candidateFindings(lineage: Lineage): AnalysisFinding[] {
  const found: AnalysisFinding[] = [];
  const scope = lineage.rejected_candidates.filter((c) =>
    c.reason === "wrong_tenant" || c.reason === "wrong_thread"
  );
  if (scope.length > 0) {
    found.push(finding(
      "rejected_for_scope",
      "warning",
      `${scope.length} candidate(s) from another tenant or thread reached selection and were rejected there; retrieval itself was not scoped`,
      scope.map(keyOf),
      scope.map((c) => c.event_id),
    ));
  }
  const stale = lineage.rejected_candidates.filter((c) =>
    c.reason === "stale_version"
  );
  if (stale.length > 0) {
    found.push(finding(
      "stale_rejected",
      "info",
      `${stale.length} candidate(s) were rejected as stale versions (for example a vector whose source was deleted)`,
      stale.map(keyOf),
      stale.map((c) => c.event_id),
    ));
  }
  return found;
}

function eventFindings(events: TraceEvent[]): AnalysisFinding[] {
  const found: AnalysisFinding[] = [];
  const failed = events.filter((e) =>
    e.status === "error" || e.success === false
  );
  if (failed.length > 0) {
    found.push(finding(
      "error_events",
      "warning",
      `${failed.length} event(s) recorded an error status or success: false`,
      [],
      failed.map((e) => e.event_id),
    ));
  }
  const orphaned = events.filter((e) => e.kind === "trace_context_missing");
  if (orphaned.length > 0) {
    found.push(finding(
      "context_missing",
      "warning",
      `${orphaned.length} worker event(s) ran without a valid trace carrier; their place in this trace is a fallback`,
      [],
      orphaned.map((e) => e.event_id),
    ));
  }
  const outcomes = events.filter((e) => e.outcome !== null);
  if (outcomes.length > 0) {
    const verified = outcomes.filter((e) => e.outcome?.verified === true);
    found.push(finding(
      "outcome_recorded",
      "info",
      `${outcomes.length} outcome(s) recorded, ${verified.length} verified by the host: ${
        [...new Set(outcomes.map((e) => e.outcome!.status))].sort(byKey).join(
          ", ",
        )
      }`,
      [],
      outcomes.map((e) => e.event_id),
    ));
  }
  return found;
}

/** The deterministic analysis of one root trace's events. */
export function analyzeTrace(events: readonly TraceEvent[]): AnalysisFinding[] {
  const ordered = chronological(events);
  const placed = placements(ordered);
  const lineage = traceLineage(ordered);
  const found = [
    ...deletedThenUsed(placed),
    ...laneGaps(placed),
    ...versionMismatches(placed),
    ...candidateFindings(lineage),
    ...eventFindings(ordered),
  ];
  const anyRef = LINEAGE_LANES.some((lane) => lineage.lanes[lane].length > 0);
  if (!anyRef) {
    found.push(finding(
      "no_lineage",
      "info",
      "no event of this root records resource refs with a lineage role or selection candidates, so lineage cannot be shown; the host records refs with role expected, retrieved, supplied or output_bound",
      [],
    ));
  }
  return found;
}
