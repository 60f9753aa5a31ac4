/**
 * Whether a kind is carried by any event in a tenant scope. Kinds are open
 * (a writer or an OTLP operation name may coin one), so a kind outside the
 * standard ones can only be told apart from a typo by looking: a filter on a
 * kind nothing in scope carries would match nothing, silently.
 *
 * @module
 */

import type { TraceDb } from "../../db.ts";
import { filterWhere } from "./_filter_sql.ts";
import type { TraceFilter } from "./filters.ts";
import { summarizeTraceEvents } from "./summaries.ts";
import { readStatement } from "./_turns.ts";

/**
 * Most events of one kind a probe examines (in the kind index, any scope)
 * before it stops looking and takes the kind as possibly present.
 */
export const KIND_PROBE_LIMIT = 10_000;

/** The tenant scope of a filter: its application and user, nothing else. */
export type KindScope = Pick<TraceFilter, "application_id" | "user_id">;

/** Only the tenant scope of `scope` (a whole filter may be passed in). */
function tenantOnly(scope: KindScope): KindScope {
  return {
    ...(scope.application_id === undefined
      ? {}
      : { application_id: scope.application_id }),
    ...(scope.user_id === undefined ? {} : { user_id: scope.user_id }),
  };
}

async function inScope(
  db: TraceDb,
  scope: KindScope,
  kind: string,
): Promise<boolean> {
  const where = filterWhere(tenantOnly(scope));
  const result = await readStatement(db, {
    sql: `SELECT 1 FROM (SELECT (${where.sql}) AS in_scope
        FROM obs_events e INDEXED BY obs_events_kind_status
        WHERE e.kind = ? LIMIT ${KIND_PROBE_LIMIT}) WHERE in_scope LIMIT 1`,
    args: [...where.args, kind],
  });
  return result.rows.length > 0;
}

async function beyondProbe(db: TraceDb, kind: string): Promise<boolean> {
  const result = await readStatement(db, {
    sql: `SELECT COUNT(*) AS n FROM (SELECT 1
        FROM obs_events INDEXED BY obs_events_kind_status
        WHERE kind = ? LIMIT ${KIND_PROBE_LIMIT})`,
    args: [kind],
  });
  return Number(result.rows[0]?.n ?? 0) >= KIND_PROBE_LIMIT;
}

/**
 * Of `kinds`, those no event in `scope` carries. A kind with more than
 * {@link KIND_PROBE_LIMIT} events outside the scope is not listed: the probe
 * stops before it could tell, and refusing a kind that may be there would be
 * worse than a filter that matches nothing.
 */
export async function kindsNotInScope(
  db: TraceDb,
  scope: KindScope,
  kinds: readonly string[],
): Promise<string[]> {
  const absent: string[] = [];
  for (const kind of new Set(kinds)) {
    if (await inScope(db, scope, kind)) continue;
    if (!await beyondProbe(db, kind)) absent.push(kind);
  }
  return absent;
}

/** Asked kinds that no event in a scope carries, and the kinds it does hold. */
export interface KindsAbsent {
  /** The asked kinds no event in the scope carries. */
  absent: string[];
  /**
   * Kinds events in the scope carry, most frequent first: those of its
   * newest events that a summary reads, at most a summary's kinds.
   */
  held: string[];
  /** True when `held` may leave kinds out (older events not read, or more kinds than listed). */
  held_partial: boolean;
}

/**
 * Why a filter on `kinds` may have matched nothing: the asked kinds no
 * event in `scope` carries and the kinds it holds, or `null` when every
 * asked kind is carried (then the other filters left nothing). The held
 * kinds come from a summary of the scope, so the read stays bounded.
 */
export async function kindsAbsentFromScope(
  db: TraceDb,
  scope: KindScope,
  kinds: readonly string[],
): Promise<KindsAbsent | null> {
  const absent = await kindsNotInScope(db, scope, kinds);
  if (absent.length === 0) return null;
  const summary = await summarizeTraceEvents(db, tenantOnly(scope));
  return {
    absent,
    held: summary.by_kind.map((entry) => entry.kind),
    held_partial: summary.window.truncated || summary.kinds_truncated,
  };
}
