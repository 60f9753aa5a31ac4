/**
 * The one read of preview content in Trace. Queries, summaries and exports
 * never select it; this exists for the audited reveal (`lib/auth/`), which
 * checks the operator's role, scope and stated reason and writes the audit
 * entry before anything read here leaves the server.
 *
 * @module
 */

import type { TraceDb } from "../../db.ts";
import { requireObs } from "../schema.ts";
import { readStatement } from "./_turns.ts";

/** A stored preview of one event. */
export interface PreviewContent {
  content: string;
  chars: number;
  /** Cut at 16,000 characters when stored. */
  truncated: boolean;
  /** SHA-256 (hex) of the stored content, as recorded at ingest. */
  sha256: string;
}

/** The stored preview of the event at `seq` in `applicationId`, or `null` when it has none (any more). */
export async function readPreviewContent(
  db: TraceDb,
  event: { seq: number; application_id: string },
): Promise<PreviewContent | null> {
  await requireObs(db);
  const result = await readStatement(db, {
    sql: `SELECT p.content, p.chars, p.truncated, p.sha256
          FROM obs_previews p JOIN obs_events e ON e.seq = p.seq
          WHERE p.seq = ? AND e.application_id = ?`,
    args: [event.seq, event.application_id],
  });
  const row = result.rows[0];
  if (!row) return null;
  return {
    content: String(row.content),
    chars: Number(row.chars),
    truncated: Number(row.truncated) === 1,
    sha256: String(row.sha256),
  };
}
