/**
 * The arguments of `trace.query_traces`: the filter of `trace events query`
 * with words for each field (what it selects, in what form), plus paging
 * and what to add. Kinds are open, so the kinds a filter may name are the
 * standard ones or one an event in scope carries; the second half of that
 * rule needs the index, so the tool applies it ({@link kindRefusal}).
 *
 * @module
 */

import * as v from "valibot";
import { KNOWN_EVENT_KINDS, STORES } from "../obs/mod.ts";
import { CONVENTION_KINDS } from "../obs/otlp/mod.ts";
import { timeRangeValid, TRACE_FILTER_ENTRIES as F } from "../obs/query/mod.ts";
import { strictArgs } from "./_args.ts";

/** Largest page the tool returns. */
const MAX_TRACE_PAGE = 250;
/** Events per page when no limit is given. */
export const DEFAULT_TRACE_PAGE = 50;

/** The kinds Trace's recorder emits and its OTLP conventions map to, sorted. */
const STANDARD_KINDS: readonly string[] = [
  ...new Set([...KNOWN_EVENT_KINDS, ...CONVENTION_KINDS]),
].sort();

const SCOPE_NOTE =
  "may only narrow the principal's scope or repeat its bound value";

/** The filter, each field with its words. */
const FILTER_ENTRIES = {
  agent_ids: v.pipe(
    F.agent_ids,
    v.description(
      "Events of any of these agent ids (exact, at most 100); with memory_ids, an event matching either list is selected",
    ),
  ),
  memory_ids: v.pipe(
    F.memory_ids,
    v.description(
      "Events on any of these memory store ids (exact, at most 100); with agent_ids, an event matching either list is selected",
    ),
  ),
  application_id: v.pipe(
    F.application_id,
    v.description(`Events of this application (tenant) id; ${SCOPE_NOTE}`),
  ),
  user_id: v.pipe(
    F.user_id,
    v.description(
      `Events of this end-user id; null: anonymous events only (no user id); absent: every user the scope allows; ${SCOPE_NOTE}`,
    ),
  ),
  thread_id: v.pipe(
    F.thread_id,
    v.description("Events of this conversation (thread) id"),
  ),
  root_trace_id: v.pipe(
    F.root_trace_id,
    v.description(
      "Events of this task scope (root trace id; an OTLP span's trace id); with explain, the root explained",
    ),
  ),
  run_id: v.pipe(
    F.run_id,
    v.description("Events of this run id (e.g. a deletion contract run)"),
  ),
  turn_id: v.pipe(
    F.turn_id,
    v.description("Events of this turn id (one turn of a thread)"),
  ),
  kinds: v.pipe(
    F.kinds,
    v.description(
      `Events of any of these kinds (at most 100): ${
        STANDARD_KINDS.join(", ")
      }, or a custom kind an event in scope carries; any other kind is refused`,
    ),
  ),
  statuses: v.pipe(
    F.statuses,
    v.description("Events with any of these span statuses: unset, ok, error"),
  ),
  tool: v.pipe(
    F.tool,
    v.description("Events that called this tool (exact tool name)"),
  ),
  success: v.pipe(
    F.success,
    v.description(
      "true: events recorded as succeeded; false: events recorded as failed; events whose success is unknown match neither",
    ),
  ),
  q: v.pipe(
    F.q,
    v.description(
      "An exact id, not a text search: events whose event_id, root_trace_id, turn_id or run_id equals it",
    ),
  ),
  start_time: v.pipe(
    F.start_time,
    v.description(
      "Events at or after this time (ISO 8601 with a zone, e.g. 2026-09-01T12:00:00Z); an event's time is its started_at, else when it was received",
    ),
  ),
  end_time: v.pipe(
    F.end_time,
    v.description(
      "Events before this time (exclusive; ISO 8601 with a zone); must be after start_time",
    ),
  ),
  resources: v.pipe(
    F.resources,
    v.description(
      "Events that reference any of these resources, as [{id, type?}] (exact id, type optional, at most 64): e.g. the retrievals that returned a document",
    ),
  ),
  store: v.pipe(
    F.store,
    v.description(
      `Events filed in this store: ${
        STORES.join(", ")
      }; all (the default): every store`,
    ),
  ),
} as const;

/** Arguments of `trace.query_traces`. */
export const QueryArgs = v.pipe(
  strictArgs({
    ...FILTER_ENTRIES,
    limit: v.optional(v.pipe(
      v.number("must be a number"),
      v.integer("must be an integer"),
      v.minValue(1, "must be at least 1"),
      v.maxValue(MAX_TRACE_PAGE, `must be at most ${MAX_TRACE_PAGE}`),
      v.description(`Events per page (default ${DEFAULT_TRACE_PAGE})`),
    )),
    cursor: v.optional(v.pipe(
      v.string("must be a string"),
      v.maxLength(512, "is too long to be a cursor"),
      v.description("next_cursor of the previous page, with the same filters"),
    )),
    explain: v.optional(v.pipe(
      v.boolean("must be true or false"),
      v.description(
        "Add the lineage (expected, retrieved, supplied, output-bound refs) of the selected root and a deterministic analysis",
      ),
    )),
    summary: v.optional(v.pipe(
      v.boolean("must be true or false"),
      v.description("Add aggregate counts of everything the filters select"),
    )),
  }),
  v.check((args) => timeRangeValid(args), "start_time must be before end_time"),
);

/**
 * The refusal of `kinds` when one is neither standard nor carried by an
 * event in scope (`absent`, as the index answered), else `null`; in the form
 * of a picklist's refusal, placed at the first such kind.
 */
export function kindRefusal(
  kinds: readonly string[],
  absent: readonly string[],
): string | null {
  const index = kinds.findIndex((kind) => absent.includes(kind));
  if (index < 0) return null;
  return `kinds.${index}: must be one of ${
    STANDARD_KINDS.join(", ")
  }, or a custom kind an event in this scope carries`;
}

/** Kinds of `kinds` outside {@link STANDARD_KINDS}: only these need the index. */
export function customKinds(kinds: readonly string[] | undefined): string[] {
  return (kinds ?? []).filter((kind) => !STANDARD_KINDS.includes(kind));
}
