/** Reading the state of both namespaces: baseline and window samples. */

import { baselineProblems } from "./baseline_problems.ts";
import type { RunIdentifiers } from "./ids.ts";
import { findMarker, type MarkerMatch } from "./marker.ts";
import type {
  Baseline,
  InventoryCounts,
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
  /** How the marker appeared; `null` when it was not seen or the query failed. */
  match: MarkerMatch | null;
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
  const inventory = await session.attempt("inventory", role, { namespace });
  const query = await session.attempt("query", role, {
    namespace,
    query: marker,
  });
  const match = query.ok ? findMarker(query.value.text, marker) : null;
  return {
    inventory: inventory.ok ? counts(inventory.value) : null,
    markerSeen: query.ok ? match !== null : null,
    match,
    errors: [inventory, query].flatMap((a) => a.ok ? [] : [a.error]),
  };
}

/** Reads the test namespace, then the control namespace. */
export async function observe(
  session: RunSession,
  ids: RunIdentifiers,
): Promise<Observation> {
  const test = await readNamespace(session, ids, "test");
  const control = await readNamespace(session, ids, "control");
  const controlInventory = control.inventory;
  return {
    inventory: test.inventory,
    marker_seen: test.markerSeen,
    marker_form: test.match?.form ?? null,
    marker_rendering: test.match?.rendering ?? [],
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
    ? findMarker(marker.value.text, ids.marker)
    : null;
  const controlMatch = control.ok
    ? findMarker(control.value.text, ids.controlMarker)
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
