/**
 * Which source expiry archives hold the envelopes of an erasure's events:
 * the locations expiry recorded in `obs_archived_envelopes` (schema
 * version 7) when each archive acknowledged, so the erasure can name every
 * file that holds its subject, whether expiry went on to delete the
 * envelope or stopped before. The records go when their event does.
 * Private to `maint/`.
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

/**
 * The subject's envelopes that source expiry handed to an archive, and the
 * archives that hold them. Every event whose envelope went to an archive
 * is counted once on each side of
 * `expired_envelopes + archived_unexpired = archived_envelopes + expired_unrecorded`.
 */
export interface ExpiredEnvelopes {
  /**
   * Events whose envelope source expiry removed, after its archive
   * acknowledged a copy: no erasure opens those archives, which still hold
   * the envelopes with the subject's ids and preview digest.
   */
  expired_envelopes: number;
  /**
   * Events whose envelope an archive holds that source expiry recorded
   * (schema version 7 on), whether expiry then removed the envelope or not.
   */
  archived_envelopes: number;
  /**
   * Of `archived_envelopes`, those source expiry did not remove: an apply
   * stopped between its batches (or with a failed batch) after its archive
   * had them. The index holds them until an erasure of scope `all` removes
   * them; the archive holds them all the same.
   */
  archived_unexpired: number;
  /**
   * Each named location holding some of `archived_envelopes`, with how
   * many, by location. An envelope archived twice (an apply stopped, then
   * applied again) is counted in both files.
   */
  expired_archives: ExpiredArchive[];
  /** Of `archived_envelopes`, those in an archive that named no location (a library archive callback). */
  expired_unnamed: number;
  /** Of `expired_envelopes`, those expired before schema version 7: no record names their archive. */
  expired_unrecorded: number;
}

/** No envelope of the subject was archived (a new object each time: callers fill it in). */
export function noExpiredEnvelopes(): ExpiredEnvelopes {
  return {
    expired_envelopes: 0,
    archived_envelopes: 0,
    archived_unexpired: 0,
    expired_archives: [],
    expired_unnamed: 0,
    expired_unrecorded: 0,
  };
}

/** SQL true when source expiry removed the envelope of `seq` (a column): its grant stays, the envelope is gone. */
function expiredSql(seq: string): string {
  return `EXISTS (SELECT 1 FROM obs_expiry_grants g WHERE g.seq = ${seq}
            AND NOT EXISTS (SELECT 1 FROM obs_envelopes v WHERE v.seq = g.seq))`;
}

/**
 * What source expiry's archives hold of `events`: per recorded location,
 * and the counts of {@link ExpiredEnvelopes}. Source expiry removed an
 * envelope when it is gone and its grant stays (the grant stays while the
 * index row does, so parity counts the row as source-expired).
 */
export async function expiredEnvelopesOf(
  executor: ErasureExecutor,
  events: readonly MatchedEvent[],
): Promise<ExpiredEnvelopes> {
  if (events.length === 0) return noExpiredEnvelopes();
  const seqs = "(SELECT value FROM json_each(?1))";
  const locations = await executor.execute({
    sql: `SELECT location, COUNT(*) AS n FROM obs_archived_envelopes
            WHERE seq IN ${seqs} GROUP BY location ORDER BY location`,
    args: [seqList(events)],
  });
  // A grant of these events whose envelope is gone: source expiry removed it.
  const expired = `FROM obs_expiry_grants x WHERE x.seq IN ${seqs}
              AND NOT EXISTS (SELECT 1 FROM obs_envelopes v WHERE v.seq = x.seq)`;
  const unexpired = `NOT ${expiredSql("a.seq")}`;
  const counts = await executor.execute({
    sql: `SELECT
            (SELECT COUNT(*) ${expired}) AS expired,
            (SELECT COUNT(DISTINCT a.seq) FROM obs_archived_envelopes a
              WHERE a.seq IN ${seqs}) AS archived,
            (SELECT COUNT(DISTINCT a.seq) FROM obs_archived_envelopes a
              WHERE a.seq IN ${seqs} AND ${unexpired}) AS unexpired,
            (SELECT COUNT(*) ${expired} AND NOT EXISTS (
              SELECT 1 FROM obs_archived_envelopes a WHERE a.seq = x.seq)) AS unrecorded`,
    args: [seqList(events)],
  });
  const row = counts.rows[0]!;
  const answer = noExpiredEnvelopes();
  answer.expired_envelopes = Number(row.expired);
  answer.archived_envelopes = Number(row.archived);
  answer.archived_unexpired = Number(row.unexpired);
  answer.expired_unrecorded = Number(row.unrecorded);
  for (const { location, n } of locations.rows) {
    if (location === "") answer.expired_unnamed = Number(n);
    else {
      answer.expired_archives.push({
        location: String(location),
        envelopes: Number(n),
      });
    }
  }
  return answer;
}

/**
 * Removes the archive records of those of `seqs` (every `seq` when `null`)
 * whose event the index no longer holds, neither its row nor its envelope:
 * an erasure of scope `all`, after it read its answer, and retention. While
 * either is left, an erasure can still match the event and must name its
 * archives. Returns the records removed.
 */
export async function dropArchiveRecords(
  executor: ErasureExecutor,
  seqs: readonly number[] | null,
): Promise<number> {
  const gone =
    `NOT EXISTS (SELECT 1 FROM obs_events e WHERE e.seq = obs_archived_envelopes.seq)
        AND NOT EXISTS (SELECT 1 FROM obs_envelopes v WHERE v.seq = obs_archived_envelopes.seq)`;
  if (seqs === null) {
    return (await executor.execute(
      `DELETE FROM obs_archived_envelopes WHERE ${gone}`,
    )).rowsAffected;
  }
  if (seqs.length === 0) return 0;
  return (await executor.execute({
    sql: `DELETE FROM obs_archived_envelopes
            WHERE seq IN (SELECT value FROM json_each(?)) AND ${gone}`,
    args: [JSON.stringify(seqs)],
  })).rowsAffected;
}
