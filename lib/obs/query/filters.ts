/**
 * The selection a query, summary or export applies, as one validated value,
 * and its translation to SQL. Agent and memory ids are alternatives (OR);
 * everything else is conjunctive. `user_id` absent means unscoped, `null`
 * means anonymous events only.
 *
 * @module
 */

import type { InValue } from "@libsql/client";
import * as v from "valibot";
import { ConfigError } from "../../errors.ts";
import { describeIssues } from "../../issues.ts";
import { canonicalJson, sha256Hex } from "../../canonical_json.ts";
import {
  EVENT_STATUSES,
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
  kinds: v.optional(v.pipe(v.array(TokenSchema), v.maxLength(MAX_LIST))),
  statuses: v.optional(
    v.array(
      v.picklist(EVENT_STATUSES, `must be one of ${EVENT_STATUSES.join(", ")}`),
    ),
  ),
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

/** Schema of a trace filter. */
export const TraceFilterSchema = v.pipe(
  v.strictObject(TRACE_FILTER_ENTRIES, strictMessage),
  v.check(timeRangeValid, "start_time must be before end_time"),
);
/** What a query, summary or export selects. */
export type TraceFilter = v.InferInput<typeof TraceFilterSchema>;

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

/** A SQL predicate over `obs_events e` with its arguments. */
export interface SqlWhere {
  sql: string;
  args: InValue[];
}

function placeholders(count: number): string {
  return Array.from({ length: count }, () => "?").join(", ");
}

/** Builds the WHERE predicate of `filter` over `obs_events e` (`1` when empty). */
export function filterWhere(filter: TraceFilter): SqlWhere {
  const parts: string[] = [];
  const args: InValue[] = [];
  const add = (sql: string, ...values: InValue[]) => {
    parts.push(sql);
    args.push(...values);
  };
  addIdentity(filter, add);
  if (filter.application_id !== undefined) {
    add("e.application_id = ?", filter.application_id);
  }
  if (filter.user_id === null) add("e.user_id IS NULL");
  else if (filter.user_id !== undefined) add("e.user_id = ?", filter.user_id);
  for (
    const column of [
      "thread_id",
      "root_trace_id",
      "run_id",
      "turn_id",
      "tool",
    ] as const
  ) {
    const value = filter[column];
    if (value !== undefined) add(`e.${column} = ?`, value);
  }
  if (filter.kinds?.length) {
    add(`e.kind IN (${placeholders(filter.kinds.length)})`, ...filter.kinds);
  }
  if (filter.statuses?.length) {
    add(
      `e.status IN (${placeholders(filter.statuses.length)})`,
      ...filter.statuses,
    );
  }
  if (filter.success !== undefined) {
    add("e.success = ?", filter.success ? 1 : 0);
  }
  if (filter.q !== undefined) {
    add(
      "(e.event_id = ? OR e.root_trace_id = ? OR e.turn_id = ? OR e.run_id = ?)",
      filter.q,
      filter.q,
      filter.q,
      filter.q,
    );
  }
  if (filter.start_time) add("e.ts >= ?", Date.parse(filter.start_time));
  if (filter.end_time) add("e.ts < ?", Date.parse(filter.end_time));
  if (filter.resources?.length) addResources(filter.resources, add);
  if (filter.store && filter.store !== "all") add("e.store = ?", filter.store);
  return { sql: parts.length > 0 ? parts.join(" AND ") : "1", args };
}

type Add = (sql: string, ...values: InValue[]) => void;

function addIdentity(filter: TraceFilter, add: Add): void {
  const agents = filter.agent_ids ?? [];
  const memories = filter.memory_ids ?? [];
  const alternatives: string[] = [];
  if (agents.length) {
    alternatives.push(`e.agent_id IN (${placeholders(agents.length)})`);
  }
  if (memories.length) {
    alternatives.push(`e.memory_id IN (${placeholders(memories.length)})`);
  }
  if (alternatives.length === 1) add(alternatives[0]!, ...agents, ...memories);
  if (alternatives.length === 2) {
    add(`(${alternatives.join(" OR ")})`, ...agents, ...memories);
  }
}

function addResources(
  refs: NonNullable<TraceFilter["resources"]>,
  add: Add,
): void {
  const terms = refs.map((ref) =>
    ref.type ? "(r.id = ? AND r.type = ?)" : "r.id = ?"
  );
  const values = refs.flatMap((ref) =>
    ref.type ? [ref.id, ref.type] : [ref.id]
  );
  add(
    `e.seq IN (SELECT r.seq FROM obs_resources r WHERE ${terms.join(" OR ")})`,
    ...values,
  );
}

/** Order-insensitive canonical form of a filter (lists sorted and deduplicated). */
export function canonicalFilter(filter: TraceFilter): Record<string, unknown> {
  const sortedUnique = (list: readonly string[] | undefined) =>
    list?.length ? [...new Set(list)].sort() : undefined;
  return {
    ...filter,
    agent_ids: sortedUnique(filter.agent_ids),
    memory_ids: sortedUnique(filter.memory_ids),
    kinds: sortedUnique(filter.kinds),
    statuses: sortedUnique(filter.statuses),
    start_time: filter.start_time && new Date(filter.start_time).toISOString(),
    end_time: filter.end_time && new Date(filter.end_time).toISOString(),
    resources: filter.resources?.length
      ? [...new Set(filter.resources.map((ref) => canonicalJson(ref)))].sort()
      : undefined,
    store: filter.store ?? "all",
  };
}

/** Short digest that binds a cursor to one filter. */
export function filterDigest(filter: TraceFilter): string {
  return sha256Hex(canonicalJson(canonicalFilter(filter))).slice(0, 32);
}
