/** Reading the state of both namespaces: baseline and window samples. */

import { baselineProblems } from "./baseline_problems.ts";
import type { RunIdentifiers } from "./ids.ts";
import { type AnswerMatch, findMarkerInAnswer } from "./answer_marker.ts";
import type {
  Baseline,
  InventoryCounts,
  MarkerPlace,
  RequestErrorRecord,
  Sample,
} from "./report.ts";
import type { RunSession } from "./_session.ts";

/** A sample without its position in the window. */
export type Observation = Omit<
  Sample,
  "index" | "started_at_seconds" | "ended_at_seconds"
>;

/** One namespace read: its inventory and whether its marker is retrievable. */
export interface NamespaceReading {
  /** `null` when the inventory request failed. */
  inventory: InventoryCounts | null;
  /** `null` when the marker query failed. */
  markerSeen: boolean | null;
  /** How and where the marker appeared; `null` when it was not seen or the query failed. */
  match: AnswerMatch | null;
  /**
   * The other namespace's marker in this namespace's answer, or `null`: a
   * deleted record retrievable from outside its own namespace.
   */
  otherMatch: AnswerMatch | null;
  errors: RequestErrorRecord[];
}

/**
 * Reads one namespace: inventory first, then the marker query, so a query's
 * own cache write cannot show up in the same reading.
 */
export async function readNamespace(
  session: RunSession,
  ids: RunIdentifiers,
  role: "test" | "control",
): Promise<NamespaceReading> {
  const namespace = role === "test" ? ids.testNamespace : ids.controlNamespace;
  const marker = role === "test" ? ids.marker : ids.controlMarker;
  const other = role === "test" ? ids.controlMarker : ids.marker;
  const inventory = await session.attempt("inventory", role, { namespace });
  const query = await session.attempt("query", role, {
    namespace,
    query: marker,
  });
  const match = query.ok ? findMarkerInAnswer(query.value, marker) : null;
  return {
    inventory: inventory.ok ? counts(inventory.value) : null,
    markerSeen: query.ok ? match !== null : null,
    match,
    otherMatch: query.ok ? findMarkerInAnswer(query.value, other) : null,
    errors: [inventory, query].flatMap((a) => a.ok ? [] : [a.error]),
  };
}

/**
 * Where the test marker was seen in one sample: the test query's answer,
 * else the control query's (the deleted canary retrievable from outside its
 * namespace), else nowhere. The control marker in the test answer says
 * nothing about the deletion and is not looked at here.
 */
function testMarkerPlace(
  test: NamespaceReading,
  control: NamespaceReading,
): { match: AnswerMatch; place: MarkerPlace } | null {
  if (test.match) {
    return {
      match: test.match,
      place: { query: "test", field: test.match.field },
    };
  }
  const leaked = control.otherMatch;
  return leaked
    ? { match: leaked, place: { query: "control", field: leaked.field } }
    : null;
}

/** Reads the test namespace, then the control namespace. */
export async function observe(
  session: RunSession,
  ids: RunIdentifiers,
): Promise<Observation> {
  const test = await readNamespace(session, ids, "test");
  const control = await readNamespace(session, ids, "control");
  const controlInventory = control.inventory;
  const seen = testMarkerPlace(test, control);
  return {
    inventory: test.inventory,
    // Seen anywhere is seen, also when the test query itself failed.
    marker_seen: seen ? true : test.markerSeen,
    marker_form: seen?.match.form ?? null,
    marker_rendering: seen?.match.rendering ?? [],
    marker_found_in: seen?.place ?? null,
    control_present: controlInventory?.complete
      ? controlInventory.source_records >= 1 &&
        controlInventory.vector_records >= 1
      : null,
    control_seen: control.markerSeen,
    control_form: control.match?.form ?? null,
    errors: [...test.errors, ...control.errors],
  };
}

function counts(inventory: InventoryCounts): InventoryCounts {
  return {
    complete: inventory.complete,
    source_records: inventory.source_records,
    vector_records: inventory.vector_records,
    cache_records: inventory.cache_records,
  };
}

/**
 * Establishes the pre-deletion state. Queries run before inventories so the
 * answer cache is warm when it is counted.
 */
export async function establishBaseline(
  session: RunSession,
  ids: RunIdentifiers,
  documentCount: number,
): Promise<Baseline> {
  const marker = await session.attempt("query", "test", {
    namespace: ids.testNamespace,
    query: ids.marker,
  });
  const control = await session.attempt("query", "control", {
    namespace: ids.controlNamespace,
    query: ids.controlMarker,
  });
  const inventory = await session.attempt("inventory", "test", {
    namespace: ids.testNamespace,
  });
  const controlInventory = await session.attempt("inventory", "control", {
    namespace: ids.controlNamespace,
  });
  const errors = [marker, control, inventory, controlInventory].flatMap((a) =>
    a.ok ? [] : [a.error]
  );
  const markerMatch = marker.ok
    ? findMarkerInAnswer(marker.value, ids.marker)
    : null;
  const controlMatch = control.ok
    ? findMarkerInAnswer(control.value, ids.controlMarker)
    : null;
  const baseline: Baseline = {
    ok: false,
    inventory: inventory.ok ? counts(inventory.value) : null,
    marker_seen: marker.ok ? markerMatch !== null : null,
    marker_form: markerMatch?.form ?? null,
    control_inventory: controlInventory.ok
      ? counts(controlInventory.value)
      : null,
    control_seen: control.ok ? controlMatch !== null : null,
    control_form: controlMatch?.form ?? null,
    problems: [],
    errors,
  };
  baseline.problems = baselineProblems(baseline, documentCount).map((p) =>
    p.text
  );
  baseline.ok = baseline.problems.length === 0;
  return baseline;
}
