/**
 * Retention's pass over envelopes whose index row is gone but whose body
 * still names a preview digest. Retention never deletes an envelope, and
 * since it redacts an envelope before its preview goes, only an older
 * build's metadata retention (which removed the index row, and its preview
 * with it, leaving the digest) could leave one; preview retention walks
 * index rows and never reaches it. Each is redacted as a `content` erasure
 * does (`_erasure_redact.ts`).
 *
 * Finding them means reading every envelope (no index tells an envelope
 * without an index row apart), so the pass reads them in windows of `seq`
 * and runs until it has been through them all once; then a mark in
 * `obs_state` says none is left and later runs skip it. Metadata retention
 * now redacts an envelope before its index row goes, so none appears later
 * and the mark stays true. Private to `maint/`.
 *
 * @module
 */

import type { TraceDb } from "../../db.ts";
import { nextTurn } from "../_turn_line.ts";
import { BODY_HOLDS_DIGEST } from "./_erasure_match.ts";
import { redactPreviewDigests } from "./_erasure_redact.ts";
import { readState, STATE_KEYS, writeState } from "./_state.ts";

/** Envelopes read per step (a range of the table by `seq`). */
const WINDOW = 10_000;

// instr() spares parsing a body that names no digest; the index row is
// looked up by its key first, so only unindexed bodies are read further.
const UNINDEXED_WITH_DIGEST = `SELECT v.seq FROM obs_envelopes v
  WHERE v.seq > ?1 AND v.seq <= ?2
    AND NOT EXISTS (SELECT 1 FROM obs_events e WHERE e.seq = v.seq)
    AND instr(v.body, '"sha256"') > 0 AND ${BODY_HOLDS_DIGEST}
  ORDER BY v.seq`;

/** Envelopes without an index row that still name a preview digest; 0 once a pass found none left. */
export async function countUnindexedDigests(db: TraceDb): Promise<number> {
  if (await cleared(db)) return 0;
  let found = 0;
  await walkUnindexed(db, (seqs) => {
    found += seqs.length;
    return Promise.resolve();
  });
  return found;
}

/**
 * Redacts every envelope without an index row that still names a preview
 * digest, `batchSize` a transaction, then records that none is left.
 */
export async function redactUnindexedDigests(
  db: TraceDb,
  batchSize: number,
  now: number,
): Promise<{ digests: number; batches: number }> {
  const totals = { digests: 0, batches: 0 };
  if (await cleared(db)) return totals;
  await walkUnindexed(db, async (seqs) => {
    for (let at = 0; at < seqs.length; at += batchSize) {
      totals.digests += await redactBatch(
        db,
        seqs.slice(at, at + batchSize),
        now,
      );
      totals.batches++;
    }
  });
  await writeState(db, STATE_KEYS.unindexedDigestsCleared, now, now);
  return totals;
}

async function redactBatch(
  db: TraceDb,
  seqs: readonly { seq: number }[],
  now: number,
): Promise<number> {
  const tx = await db.client.transaction("write");
  try {
    // Reads the envelopes again inside the transaction: one changed since is
    // redacted as it now is, one redacted since is skipped.
    const digests = await redactPreviewDigests(tx, seqs, now);
    await tx.commit();
    return digests;
  } finally {
    tx.close();
  }
}

async function cleared(db: TraceDb): Promise<boolean> {
  return await readState(db, STATE_KEYS.unindexedDigestsCleared) !== null;
}

/** Visits the matching envelopes window by window, up to the last `seq` stored when it starts. */
async function walkUnindexed(
  db: TraceDb,
  visit: (seqs: { seq: number }[]) => Promise<void>,
): Promise<void> {
  const bounds = await db.client.execute(
    "SELECT MIN(seq) AS first, MAX(seq) AS last FROM obs_envelopes",
  );
  const first = bounds.rows[0]?.first;
  const last = bounds.rows[0]?.last;
  if (first === null || first === undefined) return;
  for (let after = Number(first) - 1; after < Number(last); after += WINDOW) {
    const result = await db.client.execute({
      sql: UNINDEXED_WITH_DIGEST,
      args: [after, after + WINDOW],
    });
    if (result.rows.length > 0) {
      await visit(result.rows.map((row) => ({ seq: Number(row.seq) })));
    }
    await nextTurn(); // other work on this connection runs between windows
  }
}
