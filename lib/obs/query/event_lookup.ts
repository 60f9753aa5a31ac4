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
  await requireObs(db);
  const tenant = tenantWhere(scope);
  const rows = await readEventPage(db, {
    where: `e.event_id = ? AND ${tenant.sql}`,
    args: [eventId, ...tenant.args],
    order: "desc",
    after: null,
    limit: MAX_ID_LOOKUP,
  });
  return rows.map((row) => row.event);
}
