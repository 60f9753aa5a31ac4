/**
 * The selection a query, summary or export applies, as one validated value.
 * Agent and memory ids are alternatives (OR);
 * everything else is conjunctive. `user_id` absent means unscoped, `null`
 * means anonymous events only.
 *
 * @module
 */

import * as v from "valibot";
import { ConfigError } from "../../errors.ts";
import { describeIssues } from "../../issues.ts";
import {
  EVENT_STATUSES,
  type EventStatus,
  LIMITS,
  OpaqueIdSchema,
  STORES,
  TimestampSchema,
  TokenSchema,
} from "../model.ts";

/** Store selection: one store or all of them. */
export const STORE_SELECTIONS = ["all", ...STORES] as const;
/** One of {@link STORE_SELECTIONS}. */
export type StoreSelection = typeof STORE_SELECTIONS[number];

const MAX_LIST = 100;
const IdList = v.pipe(
  v.array(OpaqueIdSchema, "must be an array of ids"),
  v.maxLength(MAX_LIST, `must list at most ${MAX_LIST} ids`),
);

/** Entries of a trace filter (shared by the query schema). */
export const TRACE_FILTER_ENTRIES = {
  agent_ids: v.optional(IdList),
  memory_ids: v.optional(IdList),
  application_id: v.optional(OpaqueIdSchema),
  user_id: v.optional(v.nullable(OpaqueIdSchema)),
  thread_id: v.optional(OpaqueIdSchema),
  root_trace_id: v.optional(OpaqueIdSchema),
  run_id: v.optional(OpaqueIdSchema),
  turn_id: v.optional(OpaqueIdSchema),
  kinds: v.optional(v.pipe(
    v.array(TokenSchema, "must be an array of kinds"),
    v.maxLength(MAX_LIST, `must list at most ${MAX_LIST} kinds`),
  )),
  statuses: v.optional(v.pipe(
    v.array(
      v.picklist(EVENT_STATUSES, `must be one of ${EVENT_STATUSES.join(", ")}`),
      "must be an array of statuses",
    ),
    v.maxLength(MAX_LIST, `must list at most ${MAX_LIST} statuses`),
  )),
  tool: v.optional(OpaqueIdSchema),
  success: v.optional(v.boolean("must be true or false")),
  /** Exact identifier: matches event, root, turn or run id. */
  q: v.optional(OpaqueIdSchema),
  /** Inclusive lower bound on the event time. */
  start_time: v.optional(TimestampSchema),
  /** Exclusive upper bound on the event time. */
  end_time: v.optional(TimestampSchema),
  resources: v.optional(v.pipe(
    v.array(
      v.strictObject({ type: v.optional(TokenSchema), id: OpaqueIdSchema }),
    ),
    v.maxLength(LIMITS.resources, `must list at most ${LIMITS.resources} refs`),
  )),
  store: v.optional(
    v.picklist(
      STORE_SELECTIONS,
      `must be one of ${STORE_SELECTIONS.join(", ")}`,
    ),
  ),
} as const;

const strictMessage = (issue: v.BaseIssue<unknown>) =>
  issue.expected === "never"
    ? "unknown filter; remove it"
    : "must be an object";

/** True unless both bounds are given and `start_time` is not before `end_time`. */
export function timeRangeValid(
  filter: { start_time?: string | undefined; end_time?: string | undefined },
): boolean {
  return !filter.start_time || !filter.end_time ||
    Date.parse(filter.start_time) < Date.parse(filter.end_time);
}

const FilterShape = v.pipe(
  v.strictObject(TRACE_FILTER_ENTRIES, strictMessage),
  v.check(timeRangeValid, "start_time must be before end_time"),
);
/**
 * What a query, summary or export selects. Agent and memory ids are
 * alternatives (an event matches either list); every other field narrows.
 */
export interface TraceFilter {
  /** Events of any of these agents (at most 100). */
  agent_ids?: string[] | undefined;
  /** Events of any of these memory stores (at most 100). */
  memory_ids?: string[] | undefined;
  /** The tenant. */
  application_id?: string | undefined;
  /** Absent: every user; `null`: anonymous events only; a string: that user's. */
  user_id?: string | null | undefined;
  /** One conversation. */
  thread_id?: string | undefined;
  /** One task scope. */
  root_trace_id?: string | undefined;
  /** One run. */
  run_id?: string | undefined;
  /** One turn. */
  turn_id?: string | undefined;
  /** Any of these kinds (at most 100). */
  kinds?: string[] | undefined;
  /** Any of these statuses. */
  statuses?: EventStatus[] | undefined;
  /** One tool. */
  tool?: string | undefined;
  /** Only events that succeeded (`true`) or failed (`false`). */
  success?: boolean | undefined;
  /** Exact identifier: matches event, root, turn or run id. */
  q?: string | undefined;
  /** Inclusive lower bound on the event time, ISO 8601 with a zone. */
  start_time?: string | undefined;
  /** Exclusive upper bound on the event time, ISO 8601 with a zone. */
  end_time?: string | undefined;
  /** Events that touched any of these resources (type optional), at most 64. */
  resources?: { type?: string | undefined; id: string }[] | undefined;
  /** One store, or `all` (the default). */
  store?: StoreSelection | undefined;
}

/** Schema of a trace filter. */
export const TraceFilterSchema: v.GenericSchema<TraceFilter> = FilterShape;

// The interface restates what the schema accepts, for readers of the docs;
// this line stops compiling when the two drift apart.
type Same<A, B> = [A] extends [B] ? [B] extends [A] ? true : false : false;
type Holds<T extends true> = T;
type _TraceFilterMatches = Holds<
  Same<TraceFilter, v.InferInput<typeof FilterShape>>
>;

/** Validates a filter; throws a ConfigError naming the first bad field. */
export function parseTraceFilter(input: unknown): TraceFilter {
  const parsed = v.safeParse(TraceFilterSchema, input);
  if (!parsed.success) {
    throw new ConfigError(
      `Invalid trace filter: ${describeIssues(parsed.issues)}`,
    );
  }
  return parsed.output;
}
