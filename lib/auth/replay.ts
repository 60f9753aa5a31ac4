/**
 * Inert replay plans: the content-free resource refs of one selected trace
 * (an agent's root, optionally one turn or run), frozen with a fingerprint of
 * the evidence they came from. A plan executes nothing; it is what a replay
 * draft stores for review.
 *
 * A selection is planned only when it is trustworthy as a whole, and every
 * check below runs before any host hook is called:
 *
 * - complete: every page was read to its end within the bound, no selection
 *   decision left candidates unrecorded, no worker lost its trace context;
 * - trusted: no row's stored metadata failed to decode;
 * - advancing: every page moved the cursor forward and repeated no event;
 * - single-tenant: one application and one user (or anonymous).
 *
 * @module
 */

import * as v from "valibot";
import { digestOf } from "../canonical_json.ts";
import type { TraceDb } from "../db.ts";
import { ConfigError, NotFoundError, RefusedError } from "../errors.ts";
import type { TraceEvent } from "../obs/mod.ts";
import {
  MAX_PAGE_LIMIT,
  queryTraceEvents,
  type TraceFilter,
} from "../obs/query/mod.ts";
import { OpaqueId, parseOperatorInput, Reason } from "./_input.ts";
import {
  authorizeResource,
  type HookCallOptions,
  type ResourceAuthorizer,
  type ResourceRef,
} from "./hooks.ts";

/** Most events one selection may hold. */
export const MAX_REPLAY_EVENTS = 5 * MAX_PAGE_LIMIT;
/** Most distinct refs one plan may freeze (each is authorized by the host). */
export const MAX_REPLAY_REFS = 2_000;
/** Authorizer calls in flight at once. */
const AUTHORIZE_CONCURRENCY = 8;

/** Which trace a replay covers. */
export const ReplaySelectionSchema = v.strictObject({
  agent_id: OpaqueId,
  root_trace_id: OpaqueId,
  turn_id: v.optional(OpaqueId),
  run_id: v.optional(OpaqueId),
  application_id: v.optional(OpaqueId),
  user_id: v.optional(OpaqueId),
  anonymous: v.optional(
    v.union([v.literal(true), v.literal("true")], "only takes true"),
  ),
  reason: v.optional(Reason),
});
/** A validated selection (`anonymous` and `user_id` already folded into `user_id`). */
export interface ReplaySelection {
  agent_id: string;
  root_trace_id: string;
  turn_id?: string | undefined;
  run_id?: string | undefined;
  application_id?: string | undefined;
  /** `null`: anonymous evidence only. */
  user_id?: string | null | undefined;
  reason?: string | undefined;
}

/** Validates a selection (query parameters or a body). */
export function parseReplaySelection(input: unknown): ReplaySelection {
  const { anonymous, user_id, ...rest } = parseOperatorInput(
    ReplaySelectionSchema,
    input,
    "replay",
  );
  const selection: ReplaySelection = { ...rest };
  if (anonymous !== undefined && user_id !== undefined) {
    throw new ConfigError(
      "Invalid replay request: give user_id or anonymous, not both",
    );
  }
  if (anonymous) selection.user_id = null;
  else if (user_id !== undefined) selection.user_id = user_id;
  return selection;
}

/** One frozen ref and how it took part. */
export interface PlannedRef extends ResourceRef {
  /** Which version was frozen; `undefined` for an unversioned ref. */
  version: string | undefined;
  /** Lanes it appeared in: event roles, `candidate_selected`, `candidate_rejected`, `outcome`. */
  roles: string[];
}

/** An inert replay plan. */
export interface ReplayPlan {
  /** Always `inert_replay_plan`: a plan runs nothing. */
  kind: "inert_replay_plan";
  /** The plan format. */
  plan_version: 1;
  /** The one task scope it was drawn from. */
  selection: {
    application_id: string;
    user_id: string | null;
    agent_id: string;
    root_trace_id: string;
    turn_id: string | null;
    run_id: string | null;
  };
  /** Events of the selection. */
  events: number;
  /** Every ref the selection names, each confirmed by the resource authorizer. */
  refs: PlannedRef[];
  /** Refs without a version: the plan names them, but they are not immutable snapshots. */
  unversioned_refs: number;
  /** SHA-256 over the content-free projection of every selected event. */
  evidence_fingerprint: string;
  /** Always false. */
  execution_enabled: false;
  /** Always disabled. */
  network: "disabled";
  /** Always disabled. */
  side_effects: "disabled";
  /** What running it would take: none of it happens here. */
  requires: ["sandbox", "operator_approval"];
}

/** Options of {@link readReplaySelection}. */
export interface ReadSelectionOptions {
  /** The page reader (tests pass one whose pages misbehave). */
  query?: typeof queryTraceEvents;
}

/**
 * Reads every event of `selection` (its scope keys already narrowed) and
 * checks that they are complete, trusted and reached by advancing pages.
 */
export async function readReplaySelection(
  db: TraceDb,
  selection: ReplaySelection,
  options: ReadSelectionOptions = {},
): Promise<TraceEvent[]> {
  const query = options.query ?? queryTraceEvents;
  const filter = selectionFilter(selection);
  const events: TraceEvent[] = [];
  const seen = new Set<number>();
  let cursor: string | undefined;
  for (;;) {
    const page = await query(db, {
      ...filter,
      limit: MAX_PAGE_LIMIT,
      ...(cursor === undefined ? {} : { cursor }),
    });
    if (page.read_completeness === "untrusted") {
      throw refused(
        "a selected event's stored metadata could not be decoded (untrusted)",
      );
    }
    for (const event of page.events) {
      if (seen.has(event.seq)) throw notAdvancing();
      seen.add(event.seq);
      events.push(event);
    }
    if (!page.has_more) break;
    if (
      page.events.length === 0 || page.next_cursor === null ||
      page.next_cursor === cursor
    ) throw notAdvancing();
    if (events.length >= MAX_REPLAY_EVENTS) {
      throw refused(
        `the selection holds more than ${MAX_REPLAY_EVENTS} events, so it cannot be read whole; choose a turn or run`,
      );
    }
    cursor = page.next_cursor;
  }
  if (events.length === 0) {
    throw new NotFoundError(
      "No event of this agent and root is in your scope; check the ids on the inspection page",
    );
  }
  checkComplete(events);
  return events;
}

function selectionFilter(selection: ReplaySelection): TraceFilter {
  const filter: TraceFilter = {
    agent_ids: [selection.agent_id],
    root_trace_id: selection.root_trace_id,
  };
  for (const key of ["turn_id", "run_id", "application_id"] as const) {
    if (selection[key] !== undefined) filter[key] = selection[key];
  }
  if (selection.user_id !== undefined) filter.user_id = selection.user_id;
  return filter;
}

/**
 * Whether `event` falls in `selection`, by the rule {@link selectionFilter}
 * queries with: a page that holds the events already uses it to tell what
 * a plan would read. An absent (or `null`) turn or run leaves it open; a
 * `null` user means anonymous evidence only.
 */
export function selectionMatches(
  event: Pick<
    TraceEvent,
    | "agent_id"
    | "root_trace_id"
    | "application_id"
    | "turn_id"
    | "run_id"
    | "user_id"
  >,
  selection: Omit<ReplaySelection, "turn_id" | "run_id" | "reason"> & {
    turn_id?: string | null | undefined;
    run_id?: string | null | undefined;
  },
): boolean {
  const open = (wanted: string | null | undefined, actual: string | null) =>
    wanted === undefined || wanted === null || wanted === actual;
  return event.agent_id === selection.agent_id &&
    event.root_trace_id === selection.root_trace_id &&
    (selection.application_id === undefined ||
      event.application_id === selection.application_id) &&
    open(selection.turn_id, event.turn_id) &&
    open(selection.run_id, event.run_id) &&
    (selection.user_id === undefined || event.user_id === selection.user_id);
}

function checkComplete(events: readonly TraceEvent[]): void {
  const why = incompleteSelection(events);
  if (why !== null) throw refused(why);
}

/**
 * Why a selection holding `events` cannot be planned, or `null`: a
 * selection decision left candidates unrecorded, a worker lost its trace
 * context, or the events span more than one tenant. Each holds for every
 * selection that contains these events, so a page that has read some of a
 * selection's events can disable its replay control before anyone asks.
 */
export function incompleteSelection(
  events: readonly TraceEvent[],
): string | null {
  if (events.some((e) => (e.selection?.omitted_candidates ?? 0) > 0)) {
    return "a selection decision left candidates unrecorded (omitted_candidates), so the window is incomplete";
  }
  if (events.some((e) => e.kind === "trace_context_missing")) {
    return "a worker lost its trace context (trace_context_missing), so the window is incomplete";
  }
  const tenants = new Set(
    events.map((e) => JSON.stringify([e.application_id, e.user_id])),
  );
  if (tenants.size > 1) {
    return "the selection spans more than one tenant; narrow it with application_id (and user_id or anonymous)";
  }
  return null;
}

function refused(why: string): RefusedError {
  return new RefusedError(`Cannot plan a replay: ${why}`);
}

function notAdvancing(): RefusedError {
  return refused(
    "the index's pages did not advance (a cursor repeated or an event came back twice); try again once writes settle",
  );
}

/** Freezes the refs of checked events into an inert plan (no hook is called here). */
export function freezePlan(
  selection: ReplaySelection,
  events: readonly TraceEvent[],
): ReplayPlan {
  const first = events[0]!;
  const refs = collectRefs(events);
  if (refs.length > MAX_REPLAY_REFS) {
    throw refused(
      `the selection names more than ${MAX_REPLAY_REFS} resources; choose a turn or run`,
    );
  }
  return {
    kind: "inert_replay_plan",
    plan_version: 1,
    selection: {
      application_id: first.application_id,
      user_id: first.user_id,
      agent_id: selection.agent_id,
      root_trace_id: selection.root_trace_id,
      turn_id: selection.turn_id ?? null,
      run_id: selection.run_id ?? null,
    },
    events: events.length,
    refs,
    unversioned_refs: refs.filter((ref) => ref.version === undefined).length,
    evidence_fingerprint: evidenceFingerprint(events),
    execution_enabled: false,
    network: "disabled",
    side_effects: "disabled",
    requires: ["sandbox", "operator_approval"],
  };
}

function collectRefs(events: readonly TraceEvent[]): PlannedRef[] {
  const refs = new Map<string, PlannedRef>();
  const add = (ref: ResourceRef, role: string) => {
    const key = JSON.stringify([ref.type, ref.id, ref.version ?? null]);
    const known = refs.get(key) ??
      { type: ref.type, id: ref.id, version: ref.version, roles: [] };
    if (!known.roles.includes(role)) known.roles.push(role);
    refs.set(key, known);
  };
  for (const event of events) {
    for (const ref of event.resources) add(ref, ref.role ?? "referenced");
    for (const candidate of event.selection?.candidates ?? []) {
      add(
        candidate.ref,
        candidate.selected ? "candidate_selected" : "candidate_rejected",
      );
    }
    if (event.outcome?.artifact) add(event.outcome.artifact, "outcome");
  }
  return [...refs.values()]
    .map((ref) => ({ ...ref, roles: ref.roles.sort() }))
    .sort((a, b) =>
      a.type.localeCompare(b.type) || a.id.localeCompare(b.id) ||
      (a.version ?? "").localeCompare(b.version ?? "")
    );
}

/** A digest of what the plan was built from: ids, kinds, times and refs, never content. */
function evidenceFingerprint(events: readonly TraceEvent[]): string {
  const projection = [...events]
    .sort((a, b) => a.seq - b.seq)
    .map((e) => ({
      seq: e.seq,
      event_id: e.event_id,
      parent_event_id: e.parent_event_id,
      turn_id: e.turn_id,
      run_id: e.run_id,
      kind: e.kind,
      status: e.status,
      ts: e.ts,
      resources: e.resources,
      selection: e.selection,
      outcome: e.outcome,
    }));
  return digestOf(projection);
}

/**
 * Asks the host's resource authorizer about every frozen ref, rejected
 * selection candidates included; the first ref it does not confirm with
 * exactly `true` refuses the whole plan.
 */
export async function authorizePlan(
  authorizer: ResourceAuthorizer,
  plan: ReplayPlan,
  options: HookCallOptions = {},
): Promise<void> {
  const tenant = {
    application_id: plan.selection.application_id,
    user_id: plan.selection.user_id,
  };
  for (let i = 0; i < plan.refs.length; i += AUTHORIZE_CONCURRENCY) {
    const batch = plan.refs.slice(i, i + AUTHORIZE_CONCURRENCY);
    await Promise.all(batch.map((ref) =>
      authorizeResource(authorizer, {
        ref: ref.version === undefined
          ? { type: ref.type, id: ref.id }
          : { type: ref.type, id: ref.id, version: ref.version },
        tenant,
      }, options)
    ));
  }
}
