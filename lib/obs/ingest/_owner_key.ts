/**
 * The owners of event ids within a group's write: the key of an event (its
 * application and its id, which together name one event: the same id in
 * another application is another event), and the rows of both tables that
 * hold one. Private to `ingest/`.
 *
 * @module
 */

import type { TransactionStatement } from "../erased_events.ts";

/** Map key of an (application, event id) pair. */
export const ownerKey = (applicationId: string, eventId: string): string =>
  `${applicationId}\u0000${eventId}`;

/**
 * The rows of `applicationId`'s events among `ids`, from the index and from
 * the envelopes: an index row may outlive its expired envelope and the
 * other way round, so both own an id. `columns` are each table's columns
 * after `event_id`, named alike.
 */
export async function ownedRows(
  read: TransactionStatement,
  applicationId: string,
  ids: Iterable<string>,
  columns: { index: string; envelope: string },
): Promise<Record<string, unknown>[]> {
  return await read(
    `SELECT event_id, ${columns.index} FROM obs_events
          WHERE application_id = ?1 AND event_id IN (SELECT value FROM json_each(?2))
          UNION ALL
          SELECT event_id, ${columns.envelope} FROM obs_envelopes
          WHERE application_id = ?1 AND event_id IN (SELECT value FROM json_each(?2))`,
    [applicationId, JSON.stringify([...ids])],
  );
}
