/**
 * Parent links an erasure breaks on purpose. When an erased event was the
 * parent of an event that stays (another user's, another thread's), that
 * event names a parent the index no longer holds, and health would count it
 * among `missing_parent_links`, whose advice is to send the parent again.
 * So the erasure marks, in its own transaction, each event that stays and
 * whose parent it removes: an `obs_state` row keyed by that event's `seq`,
 * holding its `received_at` (a `seq` freed by a later deletion can be given
 * to a new event, which then has another time). Nothing of the erased
 * parent is kept: not its id, not a digest of it. Health skips a marked
 * event whose parent is gone, as it skips the children of parents
 * retention removed.
 *
 * A mark goes when its event is erased in turn; one whose event retention
 * removed stays, naming a `seq` nothing holds any more. The mark's time is
 * its event's own, never the erasure's: nothing ties it to a receipt.
 *
 * Only the erased events' own roots are searched (through the root index,
 * inside the erasure's write lock): a child that names a parent of another
 * root is not marked, and health still counts it.
 *
 * @module
 */

import type { ErasureExecutor, ErasureTarget } from "./erasure_participants.ts";

/** Key prefix of the marks in `obs_state`; the marked event's `seq` follows. */
export const ERASED_PARENT_PREFIX = "erasure.parent_erased:";

/**
 * Marks, inside an erasure's transaction and before its deletes, every event
 * of the application that names one of the erased events as its parent and
 * is not erased itself, and drops the marks of the erased events. Content
 * erasures (scope `content`) keep every row and mark nothing. Returns how
 * many events were marked. `eraseSubject` and `eraseSubjectNow` ask for it
 * on every erasure (`markParentLinks`).
 */
export async function markErasedParents(
  tx: ErasureExecutor,
  target: ErasureTarget,
): Promise<number> {
  if (target.scope !== "all" || target.events.length === 0) return 0;
  const seqs = JSON.stringify(target.events.map((e) => e.seq));
  await tx.execute({
    sql:
      `DELETE FROM obs_state WHERE key IN (SELECT ? || value FROM json_each(?))`,
    args: [ERASED_PARENT_PREFIX, seqs],
  });
  const marked = await tx.execute({
    sql: `INSERT INTO obs_state (key, value, updated_at)
          SELECT ?1 || c.seq, CAST(c.received_at AS TEXT), c.received_at
          FROM obs_events c
          WHERE c.root_trace_id IN (
              SELECT e.root_trace_id FROM obs_events e
              WHERE e.seq IN (SELECT value FROM json_each(?4)))
            AND c.application_id = ?2
            AND c.parent_event_id IN (SELECT value FROM json_each(?3))
            AND c.seq NOT IN (SELECT value FROM json_each(?4))
          ON CONFLICT (key) DO UPDATE SET
            value = excluded.value, updated_at = excluded.updated_at`,
    args: [
      ERASED_PARENT_PREFIX,
      target.subject.application_id,
      JSON.stringify(target.events.map((e) => e.event_id)),
      seqs,
    ],
  });
  return marked.rowsAffected;
}

/**
 * SQL true when the event aliased `alias` is marked as having lost its
 * parent to an erasure (see the module): for health's link check.
 */
export function erasedParentSql(alias: string): string {
  return `EXISTS (SELECT 1 FROM obs_state s
    WHERE s.key = '${ERASED_PARENT_PREFIX}' || ${alias}.seq
      AND s.value = CAST(${alias}.received_at AS TEXT))`;
}
