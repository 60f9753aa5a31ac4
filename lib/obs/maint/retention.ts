/**
 * Native retention of the index: previews, metadata and verified outcomes
 * each expire on their own schedule (by event time), with
 * previews <= metadata <= outcomes. Canonical envelopes are never touched
 * here; only a reviewed source expiry or an erasure removes them. Retention
 * is not erasure: an expired preview stays named in its envelope by size and
 * SHA-256, and in the fingerprint over it, until an erasure of its subject
 * redacts or removes the envelope. Deletes run in small
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
const MAX_DAYS = 36_500;

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
  /** Event-time cutoffs: rows with an event time before these expire. */
  cutoffs: {
    previews_before: string;
    metadata_before: string;
    outcomes_before: string;
  };
  /** Previews removed (or that would be). */
  previews: number;
  /** Index rows without a verified outcome. */
  events: number;
  /** Index rows with a verified outcome. */
  outcome_events: number;
  /** Resource reference rows removed with those events. */
  resources: number;
  /** Delete transactions run. */
  batches: number;
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
    if (!Number.isInteger(days) || days < 0 || days > MAX_DAYS) {
      throw new ConfigError(
        `Invalid retention policy: ${name} days ${days} must be a whole number from 0 to ${MAX_DAYS}`,
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
      storage: null,
    };
  }
  const before = await measureStorage(db);
  const removed = await deleteExpiring(db, cutoffs, batchSize);
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
  const [previews, events, resources] = await db.client.batch([
    {
      sql: `SELECT COUNT(*) AS n FROM obs_previews
            WHERE seq IN (SELECT seq FROM obs_events WHERE ts < ?)`,
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
  return {
    previews: Number(previews!.rows[0]?.n ?? 0),
    events: Number(totals.plain ?? 0),
    outcome_events: Number(totals.outcomes ?? 0),
    resources: Number(resources!.rows[0]?.n ?? 0),
  };
}

async function deleteExpiring(
  db: TraceDb,
  cutoffs: Cutoffs,
  batchSize: number,
) {
  const totals = {
    previews: 0,
    events: 0,
    outcome_events: 0,
    resources: 0,
    batches: 0,
  };
  // Previews first: walk old events by (ts, seq) and drop their previews only.
  await walkOldEvents(
    db,
    "ts < ?1 AND EXISTS (SELECT 1 FROM obs_previews p WHERE p.seq = obs_events.seq)",
    [cutoffs.previews],
    batchSize,
    async (seqs) => {
      const result = await db.client.execute({
        sql:
          "DELETE FROM obs_previews WHERE seq IN (SELECT value FROM json_each(?))",
        args: [JSON.stringify(seqs.map((s) => s.seq))],
      });
      totals.previews += result.rowsAffected;
      totals.batches++;
    },
  );
  await walkOldEvents(
    db,
    EXPIRING,
    [cutoffs.metadata, cutoffs.outcomes],
    batchSize,
    async (rows) => {
      const list = JSON.stringify(rows.map((s) => s.seq));
      const [previews, resources, events] = await db.client.batch([
        {
          sql:
            "DELETE FROM obs_previews WHERE seq IN (SELECT value FROM json_each(?))",
          args: [list],
        },
        {
          sql:
            "DELETE FROM obs_resources WHERE seq IN (SELECT value FROM json_each(?))",
          args: [list],
        },
        {
          sql:
            "DELETE FROM obs_events WHERE seq IN (SELECT value FROM json_each(?))",
          args: [list],
        },
      ], "write");
      totals.previews += previews!.rowsAffected;
      totals.resources += resources!.rowsAffected;
      const verified = rows.filter((r) => r.verified).length;
      totals.outcome_events += Math.min(verified, events!.rowsAffected);
      totals.events += events!.rowsAffected -
        Math.min(verified, events!.rowsAffected);
      totals.batches++;
    },
  );
  return totals;
}

interface OldRow {
  seq: number;
  verified: boolean;
}

/** Visits matching rows oldest first, `batchSize` at a time, by keyset on (ts, seq). */
async function walkOldEvents(
  db: TraceDb,
  where: string,
  args: number[],
  batchSize: number,
  visit: (rows: OldRow[]) => Promise<void>,
): Promise<void> {
  let after: [number, number] = [Number.MIN_SAFE_INTEGER, 0];
  const keyAt = args.length + 1;
  for (;;) {
    const result = await db.client.execute({
      sql: `SELECT seq, ts, outcome_verified FROM obs_events
            WHERE ${where} AND (ts, seq) > (?${keyAt}, ?${keyAt + 1})
            ORDER BY ts, seq LIMIT ?${keyAt + 2}`,
      args: [...args, after[0], after[1], batchSize],
    });
    if (result.rows.length === 0) return;
    await visit(result.rows.map((row) => ({
      seq: Number(row.seq),
      verified: Number(row.outcome_verified) === 1,
    })));
    const last = result.rows.at(-1)!;
    after = [Number(last.ts), Number(last.seq)];
    if (result.rows.length < batchSize) return;
    await nextTurn(); // other work on this connection runs between batches
  }
}
