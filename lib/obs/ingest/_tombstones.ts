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
  applicationsWithTombstones,
  type ReadRows,
  tombstonedEvents,
  tombstoneDigester,
  tombstoneSalt,
} from "../erased_events.ts";
import { type BatchToWrite, type Owned, ownerKey } from "./_plan.ts";

/**
 * Adds to `owned` the group's event ids that are tombstoned, unless a
 * stored event owns them already. Costs one query when no application of
 * the group had an event erased; digests only the events of those that did.
 */
export async function addTombstoned(
  read: ReadRows,
  batches: readonly BatchToWrite[],
  owned: Map<string, Owned>,
): Promise<void> {
  const erasedApps = await applicationsWithTombstones(
    read,
    applicationsOf(batches),
  );
  if (erasedApps.size === 0) return;
  const digest = tombstoneDigester(await tombstoneSalt(read));
  for (const [applicationId, ids] of eventIdsOf(batches, erasedApps)) {
    const erased = await tombstonedEvents(read, digest, applicationId, ids);
    for (const [eventId, seq] of erased) {
      const key = ownerKey(applicationId, eventId);
      if (!owned.has(key)) {
        owned.set(key, { seq, fingerprint: "", erased: true });
      }
    }
  }
}

function applicationsOf(batches: readonly BatchToWrite[]): Set<string> {
  const applications = new Set<string>();
  for (const { events } of batches) {
    for (const { meta } of events) applications.add(meta.application_id);
  }
  return applications;
}

/** The event ids of the group's events of `applications`, per application. */
function eventIdsOf(
  batches: readonly BatchToWrite[],
  applications: ReadonlySet<string>,
): Map<string, Set<string>> {
  const byApp = new Map<string, Set<string>>();
  for (const { events } of batches) {
    for (const { meta } of events) {
      if (!applications.has(meta.application_id)) continue;
      let ids = byApp.get(meta.application_id);
      if (!ids) byApp.set(meta.application_id, ids = new Set());
      ids.add(meta.event_id);
    }
  }
  return byApp;
}
