/**
 * One event by its id. Event ids are unique per application, so an id may
 * name events of several applications; the lookup returns each (a few at
 * most) and lets the caller ask for one application's.
 *
 * @module
 */

import type { TraceDb } from "../../db.ts";
import type { TraceEvent } from "../model.ts";
import { requireObs } from "../schema.ts";
import { tenantWhere } from "./_find_sql.ts";
import { readEventPage } from "./_read_rows.ts";
import type { TraceFilter } from "./filters.ts";

/** Most events one id lookup returns. */
export const MAX_ID_LOOKUP = 5;

/**
 * Events with `eventId` within the tenant scope of `scope` (its
 * `application_id` and `user_id`; other filters do not apply), newest first.
 */
export async function lookupEvent(
  db: TraceDb,
  eventId: string,
  scope: Pick<TraceFilter, "application_id" | "user_id"> = {},
): Promise<TraceEvent[]> {
  return await lookupWhere(db, eventId, scope, {}, MAX_ID_LOOKUP);
}

/** Where an event is looked for: its root and agent, optionally its turn or run. */
export interface EventPlace {
  root_trace_id: string;
  agent_id: string;
  turn_id?: string | undefined;
  run_id?: string | undefined;
}

/**
 * Events with `eventId` in `place` within the tenant scope of `scope`, at
 * most `limit`, newest first: an exact match on the event id, where a
 * search (`q`) would also match every event whose root, turn or run id is
 * the same string (a root event's id is often its root's).
 */
export async function lookupEventAt(
  db: TraceDb,
  eventId: string,
  place: EventPlace,
  scope: Pick<TraceFilter, "application_id" | "user_id">,
  limit: number,
): Promise<TraceEvent[]> {
  return await lookupWhere(db, eventId, scope, place, limit);
}

async function lookupWhere(
  db: TraceDb,
  eventId: string,
  scope: Pick<TraceFilter, "application_id" | "user_id">,
  place: Partial<EventPlace>,
  limit: number,
): Promise<TraceEvent[]> {
  await requireObs(db);
  const tenant = tenantWhere(scope);
  const parts = ["e.event_id = ?", tenant.sql];
  const args = [eventId, ...tenant.args];
  for (const column of PLACE_COLUMNS) {
    const value = place[column];
    if (value === undefined) continue;
    parts.push(`e.${column} = ?`);
    args.push(value);
  }
  const rows = await readEventPage(db, {
    where: parts.join(" AND "),
    args,
    order: "desc",
    after: null,
    limit,
  });
  return rows.map((row) => row.event);
}

const PLACE_COLUMNS = [
  "root_trace_id",
  "agent_id",
  "turn_id",
  "run_id",
] as const;
