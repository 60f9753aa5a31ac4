/**
 * SQL pieces the incident finder and its neighbours share: the exact-id
 * predicates an opaque `q` may match (one per kind of id, each served by its
 * own index), the tenant part of a filter, and a turn of the event loop
 * between statements (the local libSQL client runs each one on the calling
 * thread, so a page of several statements yields between them).
 *
 * @module
 */

import type { InValue } from "@libsql/client";
import { filterWhere, type SqlWhere } from "./_filter_sql.ts";
import type { TraceFilter } from "./filters.ts";

/** Kinds of id an opaque finder query is matched against, in the order they are reported. */
export const ID_FIELDS = [
  "event_id",
  "root_trace_id",
  "turn_id",
  "run_id",
  "thread_id",
  "memory_id",
  "resource_id",
] as const;
/** One of {@link ID_FIELDS}. */
export type IdField = typeof ID_FIELDS[number];

/** The predicate over `obs_events e` that matches `q` as one kind of id. */
export function idPredicate(field: IdField): string {
  if (field === "resource_id") {
    // Resource refs, selection candidates and outcome artifacts alike.
    return "e.seq IN (SELECT r.seq FROM obs_resources r WHERE r.id = ?)";
  }
  return `e.${field} = ?`;
}

/** `filter` (whose own `q` is ignored) conjoined with `q` matched as any of `fields`. */
export function findWhere(
  filter: TraceFilter,
  q: string | undefined,
  fields: readonly IdField[],
): SqlWhere {
  const { q: _narrow, ...rest } = filter;
  const base = filterWhere(rest);
  if (q === undefined) return base;
  if (fields.length === 0) return { sql: "0", args: [] };
  const terms = fields.map(idPredicate);
  return {
    sql: `${base.sql} AND (${terms.join(" OR ")})`,
    args: [...base.args, ...fields.map(() => q)],
  };
}

/** The tenant part of `filter` (application and user) over `alias`. */
export function tenantWhere(filter: TraceFilter, alias = "e"): SqlWhere {
  const parts: string[] = [];
  const args: InValue[] = [];
  if (filter.application_id !== undefined) {
    parts.push(`${alias}.application_id = ?`);
    args.push(filter.application_id);
  }
  if (filter.user_id === null) parts.push(`${alias}.user_id IS NULL`);
  else if (filter.user_id !== undefined) {
    parts.push(`${alias}.user_id = ?`);
    args.push(filter.user_id);
  }
  return { sql: parts.length ? parts.join(" AND ") : "1", args };
}
