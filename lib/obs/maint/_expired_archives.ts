/**
 * Where source expiry archived the envelopes of an erasure's events before
 * it: the location each grant recorded (schema version 7), so the erasure
 * can name the archive files that still hold its subject. Private to
 * `maint/`.
 *
 * @module
 */

import type { ErasureExecutor } from "./erasure_participants.ts";
import { type MatchedEvent, seqList } from "./_erasure_match.ts";

/** An archive location source expiry recorded, and how many of the erased events' envelopes it holds. */
export interface ExpiredArchive {
  /** As the archive named it: an absolute path for `trace obs expiry-apply --archive-dir`. */
  location: string;
  /** Envelopes of the subject's events it holds. */
  envelopes: number;
}

/** The subject's envelopes source expiry removed before, and the archives that still hold them. */
export interface ExpiredEnvelopes {
  /**
   * Events whose envelope source expiry had removed before, after its
   * archive acknowledged a copy: no erasure opens those archives, which
   * still hold the envelopes with the subject's ids and preview digest.
   */
  expired_envelopes: number;
  /** The archive locations recorded for those envelopes, each with its count, by location. */
  expired_archives: ExpiredArchive[];
  /** Of them, envelopes whose archive named no location (a library archive callback). */
  expired_unnamed: number;
  /** Of them, envelopes expired before schema version 7, whose archive location was never recorded. */
  expired_unrecorded: number;
}

/** No envelope of the subject was source-expired (a new object each time: callers fill it in). */
export function noExpiredEnvelopes(): ExpiredEnvelopes {
  return {
    expired_envelopes: 0,
    expired_archives: [],
    expired_unnamed: 0,
    expired_unrecorded: 0,
  };
}

/**
 * Which of `events` lost their envelope to source expiry, grouped by the
 * archive its grant names: no envelope, and the grant expiry recorded when
 * its archive acknowledged a copy (the grant stays while the index row
 * does, so parity counts the row as source-expired). A grant's `archive`
 * is NULL when it predates version 7 and `''` when the archive named none.
 */
export async function expiredEnvelopesOf(
  executor: ErasureExecutor,
  events: readonly MatchedEvent[],
): Promise<ExpiredEnvelopes> {
  if (events.length === 0) return noExpiredEnvelopes();
  const result = await executor.execute({
    sql: `SELECT g.archive AS archive, COUNT(*) AS n FROM obs_expiry_grants g
            WHERE g.seq IN (SELECT value FROM json_each(?))
              AND NOT EXISTS (SELECT 1 FROM obs_envelopes v WHERE v.seq = g.seq)
            GROUP BY g.archive ORDER BY g.archive`,
    args: [seqList(events)],
  });
  const expired = noExpiredEnvelopes();
  for (const row of result.rows) {
    const n = Number(row.n);
    expired.expired_envelopes += n;
    if (row.archive === null) expired.expired_unrecorded += n;
    else if (row.archive === "") expired.expired_unnamed += n;
    else {
      expired.expired_archives.push({
        location: String(row.archive),
        envelopes: n,
      });
    }
  }
  return expired;
}
