/**
 * Maintenance state kept in `obs_state`: the retention cutoffs applied so far
 * (so backfill does not resurrect expired rows, and neither parity nor health
 * reports them as capture failures) and the recorded parity results (for
 * health), one per scope.
 *
 * @module
 */

import type { InStatement, InValue } from "@libsql/client";
import type { TraceDb } from "../../db.ts";
import { ENVELOPE_VERSION } from "../normalize.ts";

/** Keys this module owns in `obs_state`. */
export const STATE_KEYS = {
  previewsBefore: "retention.previews_before",
  metadataBefore: "retention.metadata_before",
  outcomesBefore: "retention.outcomes_before",
  /**
   * Set once retention found no envelope without an index row that still
   * names a preview digest (only an older build's retention left them).
   */
  unindexedDigestsCleared: "retention.unindexed_digests_cleared",
  /** The last parity check over every tenant. */
  parityLast: "parity.last",
  /** Prefix of the last parity check of one tenant (the id follows). */
  parityTenantPrefix: "parity.tenant:",
} as const;

/** Event-time cutoffs (epoch ms) below which retention has removed rows. */
export interface RetentionMarks {
  previewsBefore: number | null;
  metadataBefore: number | null;
  outcomesBefore: number | null;
}

/** Reads the retention cutoffs applied so far. */
export async function readRetentionMarks(db: TraceDb): Promise<RetentionMarks> {
  const result = await db.client.execute({
    sql: "SELECT key, value FROM obs_state WHERE key IN (?, ?, ?)",
    args: [
      STATE_KEYS.previewsBefore,
      STATE_KEYS.metadataBefore,
      STATE_KEYS.outcomesBefore,
    ],
  });
  const values = new Map(
    result.rows.map((row) => [String(row.key), Number(row.value)]),
  );
  const mark = (key: string) => {
    const value = values.get(key);
    return value !== undefined && Number.isFinite(value) ? value : null;
  };
  return {
    previewsBefore: mark(STATE_KEYS.previewsBefore),
    metadataBefore: mark(STATE_KEYS.metadataBefore),
    outcomesBefore: mark(STATE_KEYS.outcomesBefore),
  };
}

/** True when retention has already removed the index rows of an event at `ts`. */
export function retainedOut(
  marks: RetentionMarks,
  ts: number,
  verifiedOutcome: boolean,
): boolean {
  const cutoff = verifiedOutcome ? marks.outcomesBefore : marks.metadataBefore;
  return cutoff !== null && ts < cutoff;
}

/**
 * SQL twin of {@link retainedOut} over an `obs_envelopes` row aliased `alias`:
 * true when retention has already removed the index rows of that envelope.
 * The event time is the body's `started_at`, else `received_at`, exactly as
 * the index computes `ts`. Bodies hold `started_at` as `toISOString()` text,
 * which orders like the instant it names when the year has four digits; a
 * signed year (before 0000 or after 9999) is decided by its sign. A body that
 * is not a readable envelope is never retained out (parity reports it).
 */
export function retainedOutSql(
  marks: RetentionMarks,
  alias: string,
): { sql: string; args: InValue[] } {
  const body = `${alias}.body`;
  const started = `json_extract(${body}, '$.event.started_at')`;
  const before = (cutoff: number | null): { sql: string; args: InValue[] } =>
    cutoff === null ? { sql: "0", args: [] } : {
      sql: `CASE
          WHEN json_type(${body}, '$.event.started_at') IS NOT 'text'
            THEN ${alias}.received_at < ?
          WHEN substr(${started}, 1, 1) = '+' THEN 0
          WHEN substr(${started}, 1, 1) = '-' THEN 1
          ELSE ${started} < ? END`,
      args: [cutoff, new Date(cutoff).toISOString()],
    };
  const outcomes = before(marks.outcomesBefore);
  const metadata = before(marks.metadataBefore);
  // CASE, not AND: SQLite evaluates CASE branches lazily, and json_extract
  // raises an error on text that is not JSON.
  return {
    sql: `(CASE
        WHEN NOT json_valid(${body}) THEN 0
        WHEN json_extract(${body}, '$.v') IS NOT ${ENVELOPE_VERSION} THEN 0
        WHEN json_extract(${body}, '$.event.outcome.verified') = 1
          THEN ${outcomes.sql}
        ELSE ${metadata.sql} END)`,
    args: [...outcomes.args, ...metadata.args],
  };
}

/** A statement raising a cutoff to `value` (never lowering it). */
export function raiseMarkStatement(
  key: string,
  value: number,
  now: number,
): InStatement {
  return {
    sql: `INSERT INTO obs_state (key, value, updated_at) VALUES (?1, ?2, ?3)
          ON CONFLICT (key) DO UPDATE SET
            value = CAST(MAX(CAST(obs_state.value AS INTEGER), CAST(excluded.value AS INTEGER)) AS TEXT),
            updated_at = excluded.updated_at`,
    args: [key, String(value), now],
  };
}

/** Stores a JSON value under `key`. */
export async function writeState(
  db: TraceDb,
  key: string,
  value: unknown,
  now: number,
): Promise<void> {
  await db.client.execute({
    sql: `INSERT INTO obs_state (key, value, updated_at) VALUES (?, ?, ?)
          ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
    args: [key, JSON.stringify(value), now],
  });
}

/** Reads a JSON value stored under `key`, or `null`. */
export async function readState(db: TraceDb, key: string): Promise<unknown> {
  const result = await db.client.execute({
    sql: "SELECT value FROM obs_state WHERE key = ?",
    args: [key],
  });
  const row = result.rows[0];
  if (!row) return null;
  try {
    return JSON.parse(String(row.value));
  } catch {
    return null;
  }
}
