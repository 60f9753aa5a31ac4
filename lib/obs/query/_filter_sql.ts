/**
 * A validated filter as a SQL predicate over `obs_events e`: agent and
 * memory ids are alternatives (OR), everything else is conjunctive, resource
 * refs match through `obs_resources`.
 *
 * @module
 */

import type { InValue } from "@libsql/client";
import type { TraceFilter } from "./filters.ts";

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
