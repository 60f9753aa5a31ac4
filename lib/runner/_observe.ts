/** Reading the state of both namespaces: baseline and window samples. */

import type { OperationResponses } from "../contract/protocol.ts";
import { baselineProblems } from "./baseline_problems.ts";
import type { RunIdentifiers } from "./ids.ts";
import type { AnswerMatch } from "./marker/mod.ts";
import type {
  Baseline,
  InventoryCounts,
  MarkerPlace,
  RequestErrorRecord,
  Sample,
} from "./report.ts";
import type { Attempt, RunSession, Searched } from "./_session.ts";

/** A sample without its position in the window. */
export type Observation = Omit<
  Sample,
  "index" | "started_at_seconds" | "ended_at_seconds"
>;

/**
 * A marker seen in one of a namespace's answers after the deletion: the
 * /query answer (retrievable), or the /inventory answer, whose records the
 * adapter still holds whatever its counts say.
 */
export interface Sighting extends AnswerMatch {
  answer: "query" | "inventory";
}

/** One namespace read: its inventory and whether its marker is retrievable. */
export interface NamespaceReading {
  /** `null` when the inventory request failed. */
  inventory: InventoryCounts | null;
  /**
   * Whether the namespace's marker was in its query or inventory answer;
   * `null` when the query failed and the inventory did not show it.
   */
  markerSeen: boolean | null;
  /** How and where the marker appeared, the query answer first; `null` when it was not seen. */
  match: Sighting | null;
  /**
   * The other namespace's marker in this namespace's answers, or `null`: a
   * deleted record retrievable from outside its own namespace (always `null`
   * when the reading was not asked to look for it).
   */
  otherMatch: Sighting | null;
  errors: RequestErrorRecord[];
}

/** What reading a namespace needs: both namespaces and both markers (a cleanup after the fact has no more). */
export type ReadIdentifiers = Pick<
  RunIdentifiers,
  "testNamespace" | "controlNamespace" | "marker" | "controlMarker"
>;

/**
 * Reads one namespace: inventory first, then the marker query, so a query's
 * own cache write cannot show up in the same reading. Both answers are
 * searched for the namespace's marker, and for the other namespace's unless
 * `options.otherMarker` is false: a window sample needs only the test marker
 * in the control answers, and every search folds and decodes each string.
 */
export async function readNamespace(
  session: RunSession,
  ids: ReadIdentifiers,
  role: "test" | "control",
  options: { otherMarker?: boolean } = {},
): Promise<NamespaceReading> {
  const namespace = role === "test" ? ids.testNamespace : ids.controlNamespace;
  const marker = role === "test" ? ids.marker : ids.controlMarker;
  const other = role === "test" ? ids.controlMarker : ids.marker;
  const inventory = await session.attempt("inventory", role, { namespace });
  const query = await session.attempt("query", role, {
    namespace,
    query: marker,
  });
  const answers: Answers = { query, inventory };
  const [match = null, otherMatch = null] = await sightings(
    session,
    role,
    answers,
    options.otherMarker === false ? [marker] : [marker, other],
  );
  // Read after the searches: an answer whose search was cut short counts as failed.
  return {
    inventory: answers.inventory.ok ? counts(answers.inventory.value) : null,
    markerSeen: match ? true : answers.query.ok ? false : null,
    match,
    otherMatch,
    errors: [answers.inventory, answers.query].flatMap((a) =>
      a.ok ? [] : [a.error]
    ),
  };
}

/** The answers of one namespace reading. */
type Answers = {
  query: Attempt<unknown>;
  inventory: Attempt<InventoryCounts>;
};

/**
 * Each marker in the query answer, else in the inventory answer, else
 * `null`. An answer whose search was cut short (the interrupt's bound, or
 * its request's timeout) or failed is not read, as if its request had
 * failed: `answers` then holds that failure in its place, and no later
 * search reads it, so a marker never counts as not seen in an answer
 * nobody finished reading.
 */
async function sightings(
  session: RunSession,
  role: "test" | "control",
  answers: Answers,
  markers: readonly string[],
): Promise<(Sighting | null)[]> {
  const found: (Sighting | null)[] = [];
  for (const marker of markers) {
    let match: Sighting | null = null;
    for (const answer of ["query", "inventory"] as const) {
      const attempt = answers[answer];
      if (!attempt.ok) continue;
      const searched = await session.search(
        answer,
        role,
        attempt.answer,
        marker,
      );
      if (!searched.ok) answers[answer] = searched;
      else if (searched.match) {
        match = { ...searched.match, answer };
        break;
      }
    }
    found.push(match);
  }
  return found;
}

/** Whether the namespace's query answer carried its marker; `null` when the query failed. */
function seenInQuery(reading: NamespaceReading): boolean | null {
  if (reading.match?.answer === "query") return true;
  return reading.errors.some((e) => e.op === "query") ? null : false;
}

/**
 * Where the test marker was seen in one sample: the test query's answer,
 * else the control query's (the deleted canary retrievable from outside its
 * namespace), else the test or control inventory's answer, else nowhere.
 * The control marker in the test answers says nothing about the deletion
 * and is not looked at here.
 */
function testMarkerPlace(
  test: NamespaceReading,
  control: NamespaceReading,
): { match: Sighting; place: MarkerPlace } | null {
  const seen = [
    { query: "test", match: test.match },
    { query: "control", match: control.otherMatch },
  ] as const;
  const first = seen.find((s) => s.match?.answer === "query") ??
    seen.find((s) => s.match !== null);
  const match = first?.match;
  if (!first || !match) return null;
  const place: MarkerPlace = { query: first.query, field: match.field };
  if (match.answer === "inventory") place.answer = "inventory";
  return { match, place };
}

/** Reads the test namespace, then the control namespace. */
export async function observe(
  session: RunSession,
  ids: RunIdentifiers,
): Promise<Observation> {
  // The control marker in the test answers says nothing about the deletion.
  const test = await readNamespace(session, ids, "test", {
    otherMarker: false,
  });
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
    control_inventory: controlInventory,
    // The control's own inventory lists its record: only its query counts.
    control_seen: seenInQuery(control),
    control_form: control.match?.answer === "query" ? control.match.form : null,
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
  const markerSearch = await searchQuery(session, "test", marker, ids.marker);
  const controlSearch = await searchQuery(
    session,
    "control",
    control,
    ids.controlMarker,
  );
  const errors = [markerSearch, controlSearch, inventory, controlInventory]
    .flatMap((a) => a.ok ? [] : [a.error]);
  const markerMatch = markerSearch.ok ? markerSearch.match : null;
  const controlMatch = controlSearch.ok ? controlSearch.match : null;
  const baseline: Baseline = {
    ok: false,
    inventory: inventory.ok ? counts(inventory.value) : null,
    marker_seen: markerSearch.ok ? markerMatch !== null : null,
    marker_form: markerMatch?.form ?? null,
    control_inventory: controlInventory.ok
      ? counts(controlInventory.value)
      : null,
    control_seen: controlSearch.ok ? controlMatch !== null : null,
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

/**
 * A baseline query's answer, as its schema reads it, searched for its
 * marker; the request's failure, or the search's when it was cut short.
 */
async function searchQuery(
  session: RunSession,
  role: "test" | "control",
  attempt: Attempt<OperationResponses["query"]>,
  marker: string,
): Promise<Searched> {
  if (!attempt.ok) return attempt;
  return await session.search("query", role, attempt.value, marker);
}
