/**
 * The tombstones a group's write checks (`../erased_events.ts`): an event
 * whose id an erasure of scope `all` removed is owned by its tombstone, so
 * a resend of it is a duplicate that writes nothing, whatever its payload
 * (the erased payload is gone, so there is nothing to compare it with).
 * Read inside the group's write transaction, beside the ownership check,
 * so an erasure committing meanwhile cannot slip between check and write.
 * Private to `ingest/`.
 *
 * @module
 */

import {
  erasedEventsByApplication,
  type TransactionStatement,
} from "../erased_events.ts";
import {
  type BatchToWrite,
  eventIdsByApplication,
  type Owned,
  ownerKey,
} from "./_plan.ts";

/**
 * Adds to `owned` the group's event ids that are tombstoned, unless a
 * stored event owns them already. Costs one query when no application of
 * the group had an event erased; digests only the events of those that did.
 */
export async function addTombstoned(
  read: TransactionStatement,
  batches: readonly BatchToWrite[],
  owned: Map<string, Owned>,
): Promise<void> {
  const erasedByApp = await erasedEventsByApplication(
    read,
    eventIdsByApplication(batches),
  );
  for (const [applicationId, erased] of erasedByApp) {
    for (const [eventId, seq] of erased) {
      const key = ownerKey(applicationId, eventId);
      if (!owned.has(key)) {
        owned.set(key, { seq, fingerprint: "", erased: true });
      }
    }
  }
}
