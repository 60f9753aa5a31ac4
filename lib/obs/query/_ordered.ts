/**
 * The newest (or oldest) rows a predicate selects, as a subquery that reads
 * an index in key order and stops at its limit. A filter whose only scope is
 * its kinds has no index ending in `(ts, seq)`: the kind index is
 * `(kind, status, ts)`, so asking it for one kind in time order makes SQLite
 * sort every event of the kind (a common kind at a million events is
 * hundreds of thousands of rows, each page). With one status as well, a
 * range of that index is in `(ts, seq)` order (the rowid ends every index
 * entry), so such a read becomes one ordered stream per kind and status,
 * merged by SQLite (`MERGE (UNION ALL)`): the merge stops at the limit.
 *
 * @module
 */

import type { InValue } from "@libsql/client";
import type { CursorKey } from "./_cursor.ts";
import type { SqlWhere } from "./_filter_sql.ts";
import type { KindStream } from "./_scan.ts";

/** What {@link orderedRows} selects. */
export interface OrderedRead {
  /** Result columns over `obs_events e`; must include `e.ts` and `e.seq` (or `*`). */
  columns: string;
  where: SqlWhere;
  order: "asc" | "desc";
  /** Continue strictly after this key in `order`. */
  after: CursorKey | null;
  limit: number;
  /** The kind and status streams to merge (see `kindStreams`), or `null`. */
  streams?: readonly KindStream[] | null;
}

/** A `SELECT` (for use as a subquery) of the first `limit` rows in `(ts, seq)` order. */
export function orderedRows(read: OrderedRead): SqlWhere {
  const dir = read.order === "desc" ? "DESC" : "ASC";
  const keyset = read.after
    ? ` AND (e.ts, e.seq) ${read.order === "desc" ? "<" : ">"} (?, ?)`
    : "";
  const keyArgs: InValue[] = read.after ? [read.after.ts, read.after.seq] : [];
  if (!read.streams?.length) {
    return {
      sql: `SELECT ${read.columns} FROM obs_events e
        WHERE ${read.where.sql}${keyset}
        ORDER BY e.ts ${dir}, e.seq ${dir} LIMIT ?`,
      args: [...read.where.args, ...keyArgs, read.limit],
    };
  }
  const arms = read.streams.map(() =>
    `SELECT ${read.columns} FROM obs_events e INDEXED BY obs_events_kind_status
      WHERE e.kind = ? AND e.status = ? AND ${read.where.sql}${keyset}`
  );
  return {
    sql: `${arms.join(" UNION ALL ")} ORDER BY ts ${dir}, seq ${dir} LIMIT ?`,
    args: [
      ...read.streams.flatMap((
        s,
      ) => [s.kind, s.status, ...read.where.args, ...keyArgs]),
      read.limit,
    ],
  };
}
