/**
 * What an opaque id is: the finder takes one id without saying whether it
 * names an event, a root, a turn, a run, a thread, a memory or a resource,
 * and this module looks it up as each of those within a filter, counting
 * (up to a bound) the events it matches as each. Every lookup is one
 * indexed equality, so an id costs the same whatever the index holds.
 *
 * @module
 */

import type { TraceDb } from "../../db.ts";
import { filterWhere } from "./_filter_sql.ts";
import { ID_FIELDS, type IdField, idPredicate } from "./_find_sql.ts";
import type { TraceFilter } from "./filters.ts";
import { readBatch } from "./_turns.ts";

/** Events counted per kind of id before the count stops. */
export const MAX_ID_MATCH_COUNT = 10_000;

/** How an opaque id matched: as which kind of id, and how many events. */
export interface IdMatch {
  field: IdField;
  /** Events matched as this kind of id (at most {@link MAX_ID_MATCH_COUNT}). */
  events: number;
  /** True when the count stopped at {@link MAX_ID_MATCH_COUNT}. */
  capped: boolean;
}

/** The kinds of id `q` matches within `filter` (whose own `q` is ignored), in {@link ID_FIELDS} order. */
export async function matchOpaqueId(
  db: TraceDb,
  q: string,
  filter: TraceFilter,
): Promise<IdMatch[]> {
  const { q: _narrow, ...rest } = filter;
  const base = filterWhere(rest);
  const results = await readBatch(
    db,
    ID_FIELDS.map((field) => ({
      sql: `SELECT COUNT(*) AS n FROM (SELECT 1 FROM obs_events e
              WHERE ${idPredicate(field)} AND ${base.sql}
              LIMIT ${MAX_ID_MATCH_COUNT + 1})`,
      args: [q, ...base.args],
    })),
  );
  const matches: IdMatch[] = [];
  ID_FIELDS.forEach((field, i) => {
    const n = Number(results[i]?.rows[0]?.n ?? 0);
    if (n === 0) return;
    matches.push({
      field,
      events: Math.min(n, MAX_ID_MATCH_COUNT),
      capped: n > MAX_ID_MATCH_COUNT,
    });
  });
  return matches;
}
