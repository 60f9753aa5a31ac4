/**
 * One event by its id. Event ids are unique per application, so an id may
 * name events of several applications; the lookup returns each (a few at
 * most) and lets the caller ask for one application's. Every lookup matches
 * the event id exactly, where a search (`q`) would also match every event
 * whose root, turn or run id is the same string (a root event's id is often
 * its root's, so a busy root would crowd its own event out of a page).
 *
 * @module
 */

import type { TraceDb } from "../../db.ts";
import type { TraceEvent } from "../model.ts";
import { requireObs } from "../schema.ts";
import { tenantWhere } from "./_find_sql.ts";
import { type DecodedRow, readEventPage } from "./_read_rows.ts";
import type { TraceFilter } from "./filters.ts";
import type { ReadCompleteness } from "./query.ts";

/** Most events one id lookup returns. */
export const MAX_ID_LOOKUP = 5;

/** The tenant scope a lookup stays within. */
type TenantScope = Pick<TraceFilter, "application_id" | "user_id">;

/**
 * Events with `eventId` within the tenant scope of `scope` (its
 * `application_id` and `user_id`; other filters do not apply), newest first.
 */
export async function lookupEvent(
  db: TraceDb,
  eventId: string,
  scope: TenantScope = {},
): Promise<TraceEvent[]> {
  return eventsOf(await lookupWhere(db, eventId, scope, {}, MAX_ID_LOOKUP));
}

/** Where an event is looked for: each part given narrows a lookup. */
export interface PartOfPlace {
  root_trace_id?: string | undefined;
  agent_id?: string | undefined;
  turn_id?: string | undefined;
  run_id?: string | undefined;
}

/** Events one id names, and how completely they were read. */
export interface EventsById {
  /** Newest first. */
  events: TraceEvent[];
  /** `partial` when more than the limit hold the id, `untrusted` when a row could not be decoded. */
  read_completeness: ReadCompleteness;
}

/**
 * Events with `eventId` at whatever part of a place `place` gives, within
 * the tenant scope of `scope`, at most `limit`, newest first, with how
 * completely they were read: the events an id's page lists, and the one
 * a reveal names.
 */
export async function readEventsById(
  db: TraceDb,
  eventId: string,
  options: { scope: TenantScope; place: PartOfPlace; limit: number },
): Promise<EventsById> {
  const { scope, place, limit } = options;
  const rows = await lookupWhere(db, eventId, scope, place, limit + 1);
  const read = rows.slice(0, limit);
  return {
    events: eventsOf(read),
    read_completeness: read.some((row) => row.untrusted)
      ? "untrusted"
      : rows.length > limit
      ? "partial"
      : "complete",
  };
}

async function lookupWhere(
  db: TraceDb,
  eventId: string,
  scope: TenantScope,
  place: PartOfPlace,
  limit: number,
): Promise<DecodedRow[]> {
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
  return await readEventPage(db, {
    where: parts.join(" AND "),
    args,
    order: "desc",
    after: null,
    limit,
  });
}

function eventsOf(rows: readonly DecodedRow[]): TraceEvent[] {
  return rows.map((row) => row.event);
}

const PLACE_COLUMNS = [
  "root_trace_id",
  "agent_id",
  "turn_id",
  "run_id",
] as const;
