/**
 * Canonical source envelopes as maintenance reads them back: backfill and
 * parity project them onto index rows, expiry hands them to an archive.
 *
 * @module
 */

import type { ErasureExecutor } from "./erasure_participants.ts";

/** Columns of `obs_envelopes` every maintenance read selects. */
export const ENVELOPE_SELECT =
  "seq, application_id, event_id, store, source, fingerprint, body, received_at";

/** One stored source envelope. */
export interface EnvelopeRecord {
  /** Key shared with the event's index rows. */
  seq: number;
  /** The tenant. */
  application_id: string;
  /** The writer's id of the event. */
  event_id: string;
  /** The store the event belongs to. */
  store: string;
  /** The ingest path it arrived by (`api`, `otlp`, `recorder`, `cli`, `import`). */
  source: string;
  /** SHA-256 of `body`. */
  fingerprint: string;
  /** Canonical JSON of the event's metadata (a preview appears as its digest only). */
  body: string;
  /** When it was received, epoch ms. */
  received_at: number;
}

/** Reads an envelope row from a query result. */
export function envelopeFromRow(
  row: Readonly<Record<string, unknown>>,
): EnvelopeRecord {
  return {
    seq: Number(row.seq),
    application_id: String(row.application_id),
    event_id: String(row.event_id),
    store: String(row.store),
    source: String(row.source),
    fingerprint: String(row.fingerprint),
    body: String(row.body),
    received_at: Number(row.received_at),
  };
}

/**
 * Deletes the envelopes named by `pairs` (JSON of `[seq, fingerprint]`
 * pairs) that still hold those fingerprints, and returns how many went. The
 * schema's guard lets a delete through only for a granted pair, so each is
 * granted first, in the caller's transaction. Source expiry and an
 * erasure's redaction are the two reviewed paths that use it.
 */
export async function deleteGrantedEnvelopes(
  executor: ErasureExecutor,
  pairs: string,
  now: number,
): Promise<number> {
  const pairRows =
    "SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?)";
  await executor.execute({
    sql:
      `INSERT OR REPLACE INTO obs_expiry_grants (seq, fingerprint, granted_at)
          SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), ?
          FROM json_each(?)`,
    args: [now, pairs],
  });
  const deleted = await executor.execute({
    sql: `DELETE FROM obs_envelopes WHERE (seq, fingerprint) IN (${pairRows})`,
    args: [pairs],
  });
  return deleted.rowsAffected;
}
