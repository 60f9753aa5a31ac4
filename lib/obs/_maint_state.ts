/**
 * Maintenance state kept in `obs_state`: the retention cutoffs applied so far
 * (so backfill does not resurrect expired rows and parity does not report them
 * as capture failures) and the last recorded parity result (for health).
 *
 * @module
 */

import type { InStatement } from "@libsql/client";
import type { TraceDb } from "../db.ts";

/** Keys this module owns in `obs_state`. */
export const STATE_KEYS = {
  previewsBefore: "retention.previews_before",
  metadataBefore: "retention.metadata_before",
  outcomesBefore: "retention.outcomes_before",
  parityLast: "parity.last",
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
