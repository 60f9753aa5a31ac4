/**
 * Canonical source envelopes as maintenance reads them back: backfill and
 * parity project them onto index rows, expiry hands them to an archive.
 *
 * @module
 */

import type { Row } from "@libsql/client";

/** Columns of `obs_envelopes` every maintenance read selects. */
export const ENVELOPE_SELECT =
  "seq, application_id, event_id, store, source, fingerprint, body, received_at";

/** One stored source envelope. */
export interface EnvelopeRecord {
  seq: number;
  application_id: string;
  event_id: string;
  store: string;
  source: string;
  fingerprint: string;
  body: string;
  received_at: number;
}

/** Reads an envelope row from a query result. */
export function envelopeFromRow(row: Row): EnvelopeRecord {
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
