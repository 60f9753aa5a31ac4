/**
 * Native retention of the index: previews, metadata and verified outcomes
 * each expire on their own schedule (by event time, and a preview by its
 * receipt when that came first: its event is dated after it), with
 * previews <= metadata <= outcomes. Canonical envelopes are never deleted
 * here; only a reviewed source expiry or an erasure removes them. But an
 * envelope names its preview by SHA-256 and its fingerprint is a digest of
 * that, from which a short text could be confirmed by guessing: in the
 * transaction that removes a preview, the envelope is replaced by a redacted
 * one (size only, a new fingerprint) exactly as a `content` erasure does
 * (`_erasure_redact.ts`), and so are the fingerprints of an index row whose
 * envelope source expiry removed, and of its grant. A grant goes with the
 * index row metadata retention removes (it only lets parity count that row
 * as source-expired), and so do the records of the archives that hold the
 * event's envelope once the envelope is gone too. An envelope whose index
 * row an older build's
 * retention removed, and that still names its preview's digest, is
 * redacted too (`_retention_unindexed.ts`). Deletes run in small
 * batches, each its own short transaction, so writers keep going; afterwards
 * free pages are returned to the file system in small incremental steps when
 * the file allows it (a full VACUUM, which blocks writers, only on request)
 * and the bytes before, after and reclaimed are reported.
 *
 * @module
 */

import type { TraceDb } from "../../db.ts";
import { nextTurn } from "../_turn_line.ts";
import { ConfigError } from "../../errors.ts";
import { raiseMarkStatement, STATE_KEYS } from "./_state.ts";
import {
  measureStorage,
  reclaimStorage,
  skippedReclaim,
  type StorageReport,
} from "./_storage.ts";
import { requireObs } from "../schema.ts";
import { BODY_HOLDS_DIGEST } from "./_erasure_match.ts";
import { dropArchiveRecords } from "./_expired_archives.ts";
import {
  countPreviewDigests,
  redactPreviewDigests,
} from "./_erasure_redact.ts";
import {
  countUnindexedDigests,
  redactUnindexedDigests,
} from "./_retention_unindexed.ts";

export {
  AUTO_VACUUM_MODES,
  type AutoVacuumMode,
  RECLAIM_METHODS,
  type ReclaimMethod,
  type StorageBefore,
  type StorageReport,
} from "./_storage.ts";

/** Default policy in days. */
export const DEFAULT_RETENTION_DAYS = {
  previews: 7,
  metadata: 30,
  outcomes: 365,
} as const;

/** Rows per delete transaction when none is given. */
export const DEFAULT_RETENTION_BATCH = 500;

const DAY_MS = 86_400_000;
/** The longest retention period a policy accepts, in days (about a century). */
export const MAX_RETENTION_DAYS = 36_500;

/** Options for {@link retention}. */
export interface RetentionOptions {
  /** Days previews are kept (default 7). */
  previewsDays?: number;
  /** Days event metadata without a verified outcome is kept (default 30). */
  metadataDays?: number;
  /** Days events with a verified outcome are kept (default 365). */
  outcomesDays?: number;
  /** Count only (default `true`). */
  dryRun?: boolean;
  /** Rows per delete transaction (default 500). */
  batchSize?: number;
  /** Return freed pages to the file system after deleting (default `true`). */
  reclaim?: boolean;
  /**
   * When the file is not in incremental auto-vacuum mode, run a full VACUUM
   * (an exclusive rewrite that blocks writers while it runs) and switch the
   * file to incremental mode (default `false`: the freed pages stay in the
   * file for new rows, and the report says how many bytes they hold).
   */
  vacuum?: boolean;
  /** Clock in epoch ms (tests pin it). */
  now?: () => number;
  /**
   * Stops an apply between batches (each batch is its own transaction, so
   * nothing is cut short); the result says `interrupted`.
   */
  signal?: AbortSignal;
}

/** What retention removed, or on a dry run would remove. */
export interface RetentionResult {
  /** True when nothing was deleted. */
  dry_run: boolean;
  /** The policy applied, in days. */
  policy: {
    previews_days: number;
    metadata_days: number;
    outcomes_days: number;
  };
  /**
   * Event-time cutoffs: rows with an event time before these expire (and
   * a preview received before `previews_before`, whatever its event's time).
   */
  cutoffs: {
    previews_before: string;
    metadata_before: string;
    outcomes_before: string;
  };
  /** Previews removed (or that would be). */
  previews: number;
  /**
   * Of `previews`, those that expire by their receipt: received before the
   * preview cutoff, of events dated at or after it. A preview expires by the
   * earlier of its event's time and its receipt, so a writer's clock running
   * ahead does not keep the content. Any of them points at such a writer.
   */
  previews_by_receipt: number;
  /**
   * Events whose envelope (or, without one, whose fingerprint) named the
   * digest of a preview retention removes, or removed before this was
   * redacted (with or without its index row), and that were redacted (or
   * would be).
   */
  preview_digests: number;
  /** Index rows without a verified outcome. */
  events: number;
  /** Index rows with a verified outcome. */
  outcome_events: number;
  /** Resource reference rows removed with those events. */
  resources: number;
  /** Delete transactions run. */
  batches: number;
  /**
   * An apply stopped between batches by its signal: the counts are what was
   * removed before it, the rest stays until retention runs again (and the
   * marks health reads are not raised).
   */
  interrupted: boolean;
  /** File size before and after, and bytes reclaimed; `null` on a dry run. */
  storage: StorageReport | null;
}

/** A validated retention policy, in days. */
export interface RetentionPolicy {
  /** Days previews are kept. */
  previews: number;
  /** Days metadata without a verified outcome is kept. */
  metadata: number;
  /** Days events with a verified outcome are kept. */
  outcomes: number;
}

/** Validates a policy: whole days from 0 to 36,500 with previews <= metadata <= outcomes. */
export function retentionPolicy(
  options: RetentionOptions = {},
): RetentionPolicy {
  const policy = {
    previews: options.previewsDays ?? DEFAULT_RETENTION_DAYS.previews,
    metadata: options.metadataDays ?? DEFAULT_RETENTION_DAYS.metadata,
    outcomes: options.outcomesDays ?? DEFAULT_RETENTION_DAYS.outcomes,
  };
  for (const [name, days] of Object.entries(policy)) {
    if (!Number.isInteger(days) || days < 0 || days > MAX_RETENTION_DAYS) {
      throw new ConfigError(
        `Invalid retention policy: ${name} days ${days} must be a whole number from 0 to ${MAX_RETENTION_DAYS}`,
      );
    }
  }
  if (policy.previews > policy.metadata || policy.metadata > policy.outcomes) {
    throw new ConfigError(
      `Invalid retention policy: previews (${policy.previews} days) <= metadata (${policy.metadata} days) <= outcomes (${policy.outcomes} days) must hold; shorten the earlier or lengthen the later`,
    );
  }
  return policy;
}

interface Cutoffs {
  previews: number;
  metadata: number;
  outcomes: number;
}

// Rows that hold a preview, or whose envelope still names the digest of one
// removed before retention redacted envelopes (instr() spares parsing every
// envelope already redacted on each run).
const PREVIEW_HELD = `(
  EXISTS (SELECT 1 FROM obs_previews p WHERE p.seq = obs_events.seq)
  OR EXISTS (SELECT 1 FROM obs_envelopes v WHERE v.seq = obs_events.seq
    AND instr(v.body, '"sha256"') > 0 AND ${BODY_HOLDS_DIGEST}))`;

// Rows whose preview expires by event time.
const PREVIEW_EXPIRING = `ts < ?1 AND ${PREVIEW_HELD}`;

// Of the rows dated at or after the cutoff (walked from there), those
// received before it. A writer whose clock runs ahead, or that sends
// microseconds as milliseconds, dates its events after their receipt, even
// years ahead; counted from event time alone, their previews (the content)
// would outlive the period by as much. So a preview expires by the earlier
// of its event's time and its receipt. The walk reads the time index from
// the cutoff on: the events of the preview period and any dated later.
// Metadata and outcomes keep counting from event time: the marks that
// parity and backfill read name event times.
const PREVIEW_BY_RECEIPT = `received_at < ?1 AND ${PREVIEW_HELD}`;

// Rows expiring as metadata: no verified outcome and older than metadata, or
// a verified outcome older than outcomes (an older cutoff, by the ordering rule).
const EXPIRING = "ts < ?1 AND (outcome_verified IS NOT 1 OR ts < ?2)";

/** Applies (or on a dry run, counts) the retention policy. */
export async function retention(
  db: TraceDb,
  options: RetentionOptions = {},
): Promise<RetentionResult> {
  const policy = retentionPolicy(options);
  const batchSize = options.batchSize ?? DEFAULT_RETENTION_BATCH;
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 10_000) {
    throw new ConfigError(
      `Invalid retention batch size ${batchSize}: use a whole number from 1 to 10000`,
    );
  }
  await requireObs(db);
  const now = (options.now ?? Date.now)();
  const cutoffs: Cutoffs = {
    previews: now - policy.previews * DAY_MS,
    metadata: now - policy.metadata * DAY_MS,
    outcomes: now - policy.outcomes * DAY_MS,
  };
  const base = {
    policy: {
      previews_days: policy.previews,
      metadata_days: policy.metadata,
      outcomes_days: policy.outcomes,
    },
    cutoffs: {
      previews_before: new Date(cutoffs.previews).toISOString(),
      metadata_before: new Date(cutoffs.metadata).toISOString(),
      outcomes_before: new Date(cutoffs.outcomes).toISOString(),
    },
  };
  if (options.dryRun ?? true) {
    return {
      dry_run: true,
      ...base,
      ...await countExpiring(db, cutoffs),
      batches: 0,
      interrupted: false,
      storage: null,
    };
  }
  const before = await measureStorage(db);
  const removed = await deleteExpiring(db, cutoffs, {
    batchSize,
    now,
    signal: options.signal,
  });
  if (removed.interrupted) {
    // The marks say everything before the cutoffs is gone, which is not so yet.
    return {
      dry_run: false,
      ...base,
      ...removed,
      storage: await skippedReclaim(
        db,
        before,
        "interrupted: nothing was reclaimed; the next run reclaims",
      ),
    };
  }
  await db.client.batch([
    raiseMarkStatement(STATE_KEYS.previewsBefore, cutoffs.previews, now),
    raiseMarkStatement(STATE_KEYS.metadataBefore, cutoffs.metadata, now),
    raiseMarkStatement(STATE_KEYS.outcomesBefore, cutoffs.outcomes, now),
  ], "write");
  const storage = options.reclaim === false
    ? await skippedReclaim(db, before)
    : await reclaimStorage(db, before, { vacuum: options.vacuum ?? false });
  return { dry_run: false, ...base, ...removed, storage };
}

async function countExpiring(db: TraceDb, cutoffs: Cutoffs) {
  const [previews, byReceipt, events, resources] = await db.client.batch([
    {
      sql: `SELECT COUNT(*) AS n FROM obs_previews
            WHERE seq IN (SELECT seq FROM obs_events WHERE ts < ?)`,
      args: [cutoffs.previews],
    },
    {
      sql: `SELECT COUNT(*) AS n FROM obs_previews
            WHERE seq IN (SELECT seq FROM obs_events
              WHERE ts >= ?1 AND received_at < ?1)`,
      args: [cutoffs.previews],
    },
    {
      sql:
        `SELECT TOTAL(outcome_verified IS NOT 1) AS plain, TOTAL(outcome_verified = 1) AS outcomes
            FROM obs_events WHERE ${EXPIRING}`,
      args: [cutoffs.metadata, cutoffs.outcomes],
    },
    {
      sql: `SELECT COUNT(*) AS n FROM obs_resources
            WHERE seq IN (SELECT seq FROM obs_events WHERE ${EXPIRING})`,
      args: [cutoffs.metadata, cutoffs.outcomes],
    },
  ], "read");
  const totals = events!.rows[0]!;
  let digests = 0;
  const countDigests = async (rows: OldRow[]) => {
    digests += await countPreviewDigests(db.client, rows);
  };
  await walkExpiringPreviews(
    db,
    cutoffs.previews,
    DEFAULT_RETENTION_BATCH,
    countDigests,
  );
  digests += await countUnindexedDigests(db);
  const receipt = Number(byReceipt!.rows[0]?.n ?? 0);
  return {
    previews: Number(previews!.rows[0]?.n ?? 0) + receipt,
    previews_by_receipt: receipt,
    preview_digests: digests,
    events: Number(totals.plain ?? 0),
    outcome_events: Number(totals.outcomes ?? 0),
    resources: Number(resources!.rows[0]?.n ?? 0),
  };
}

async function deleteExpiring(
  db: TraceDb,
  cutoffs: Cutoffs,
  apply: { batchSize: number; now: number; signal: AbortSignal | undefined },
) {
  const { batchSize, now, signal } = apply;
  const totals = {
    previews: 0,
    previews_by_receipt: 0,
    preview_digests: 0,
    events: 0,
    outcome_events: 0,
    resources: 0,
    batches: 0,
    interrupted: false,
  };
  const stopped = () => (totals.interrupted = signal?.aborted === true);
  // Previews first: walk old events by (ts, seq); each batch redacts the
  // digests naming their previews and drops the previews, in one transaction.
  await walkExpiringPreviews(
    db,
    cutoffs.previews,
    batchSize,
    async (rows, byReceipt) => {
      const removed = await removePreviews(db, rows, now);
      totals.previews += removed.previews;
      if (byReceipt) totals.previews_by_receipt += removed.previews;
      totals.preview_digests += removed.digests;
      totals.batches++;
    },
    stopped,
  );
  if (totals.interrupted) return totals;
  await walkOldEvents(
    db,
    EXPIRING,
    [cutoffs.metadata, cutoffs.outcomes],
    batchSize,
    async (rows) => {
      const removed = await removeEvents(db, rows, now);
      totals.previews += removed.previews;
      totals.preview_digests += removed.digests;
      totals.resources += removed.resources;
      const verified = rows.filter((r) => r.verified).length;
      totals.outcome_events += Math.min(verified, removed.events);
      totals.events += removed.events - Math.min(verified, removed.events);
      totals.batches++;
    },
    stopped,
  );
  if (totals.interrupted) return totals;
  // Envelopes whose index row an older build's retention removed with the
  // preview, and that still name its digest.
  const unindexed = await redactUnindexedDigests(db, batchSize, now);
  totals.preview_digests += unindexed.digests;
  totals.batches += unindexed.batches;
  // Grants whose index row an earlier retention removed, and whose envelope
  // is gone too, vouch for nothing and still hold a fingerprint; archive
  // records of such events name files no erasure can match them to.
  await db.client.execute(
    `DELETE FROM obs_expiry_grants
      WHERE NOT EXISTS (SELECT 1 FROM obs_events e WHERE e.seq = obs_expiry_grants.seq)
        AND NOT EXISTS (SELECT 1 FROM obs_envelopes v WHERE v.seq = obs_expiry_grants.seq)`,
  );
  await dropArchiveRecords(db.client, null);
  return totals;
}

/**
 * One batch of the preview pass: the digests naming the previews of `rows`
 * are redacted first (an index row without its envelope takes the preview's
 * size from it), then the previews go, in one transaction.
 */
async function removePreviews(
  db: TraceDb,
  rows: readonly OldRow[],
  now: number,
): Promise<{ previews: number; digests: number }> {
  const tx = await db.client.transaction("write");
  try {
    const digests = await redactPreviewDigests(tx, rows, now);
    const deleted = await tx.execute({
      sql:
        "DELETE FROM obs_previews WHERE seq IN (SELECT value FROM json_each(?))",
      args: [JSON.stringify(rows.map((row) => row.seq))],
    });
    await tx.commit();
    return { previews: deleted.rowsAffected, digests };
  } finally {
    tx.close();
  }
}

/**
 * One batch of the metadata pass, in one transaction. A preview the first
 * pass did not see (its event arrived in between) is redacted as there; a
 * grant goes with its index row: it only lets parity count that row as
 * source-expired, and would otherwise keep the row's fingerprint for good.
 * So do the records of the archives that hold the event's envelope, unless
 * the envelope is still in the index (an expiry apply stopped before
 * deleting it): an erasure still matches the event by it, and names them.
 */
async function removeEvents(
  db: TraceDb,
  rows: readonly OldRow[],
  now: number,
) {
  const list = JSON.stringify(rows.map((row) => row.seq));
  const inList = "seq IN (SELECT value FROM json_each(?))";
  const tx = await db.client.transaction("write");
  try {
    const digests = await redactPreviewDigests(tx, rows, now);
    const deleted = async (table: string) =>
      (await tx.execute({
        sql: `DELETE FROM ${table} WHERE ${inList}`,
        args: [list],
      })).rowsAffected;
    const previews = await deleted("obs_previews");
    const resources = await deleted("obs_resources");
    const events = await deleted("obs_events");
    await deleted("obs_expiry_grants");
    await dropArchiveRecords(tx, rows.map((row) => row.seq));
    await tx.commit();
    return { previews, digests, resources, events };
  } finally {
    tx.close();
  }
}

interface OldRow {
  seq: number;
  verified: boolean;
}

/**
 * Visits the rows whose preview expires: by event time, then by receipt
 * (`byReceipt`), until `stop()` says so before a batch; true when it did.
 */
async function walkExpiringPreviews(
  db: TraceDb,
  cutoff: number,
  batchSize: number,
  visit: (rows: OldRow[], byReceipt: boolean) => Promise<void>,
  stop: () => boolean = () => false,
): Promise<boolean> {
  const byTime = (rows: OldRow[]) => visit(rows, false);
  const byReceipt = (rows: OldRow[]) => visit(rows, true);
  if (
    await walkOldEvents(db, PREVIEW_EXPIRING, [cutoff], batchSize, byTime, stop)
  ) return true;
  return await walkOldEvents(
    db,
    PREVIEW_BY_RECEIPT,
    [cutoff],
    batchSize,
    byReceipt,
    stop,
    cutoff,
  );
}

/**
 * Visits matching rows dated at or after `fromTs` (default: all), oldest
 * first, `batchSize` at a time, by keyset on (ts, seq), until none is left
 * or `stop()` says so before a batch; true when it did.
 */
async function walkOldEvents(
  db: TraceDb,
  where: string,
  args: number[],
  batchSize: number,
  visit: (rows: OldRow[]) => Promise<void>,
  stop: () => boolean = () => false,
  fromTs: number = Number.MIN_SAFE_INTEGER,
): Promise<boolean> {
  // The start is the keyset's first bound (seqs start at 1), so the walk is
  // one range of the time index.
  let after: [number, number] = [fromTs, 0];
  const keyAt = args.length + 1;
  for (;;) {
    if (stop()) return true;
    const result = await db.client.execute({
      sql: `SELECT seq, ts, outcome_verified FROM obs_events
            WHERE ${where} AND (ts, seq) > (?${keyAt}, ?${keyAt + 1})
            ORDER BY ts, seq LIMIT ?${keyAt + 2}`,
      args: [...args, after[0], after[1], batchSize],
    });
    if (result.rows.length === 0) return false;
    await visit(result.rows.map((row) => ({
      seq: Number(row.seq),
      verified: Number(row.outcome_verified) === 1,
    })));
    const last = result.rows.at(-1)!;
    after = [Number(last.ts), Number(last.seq)];
    if (result.rows.length < batchSize) return false;
    await nextTurn(); // other work on this connection runs between batches
  }
}
