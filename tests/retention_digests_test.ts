/**
 * Retention removes previews; an envelope named its preview by a plain
 * SHA-256 and its fingerprint (also kept by index rows and expiry grants) is
 * a digest of that, so a short text could be confirmed by hashing guesses.
 * After retention none of those digests may be anywhere in trace.db.
 */

import assert from "node:assert/strict";
import type { TraceDb } from "../lib/db.ts";
import { ingestEvents } from "../lib/obs/ingest/mod.ts";
import {
  applyExpiry,
  parity,
  planExpiry,
  retention,
} from "../lib/obs/maint/mod.ts";
import {
  erasedFingerprint,
  type NormalizedEvent,
  normalizeEvent,
} from "../lib/obs/normalize.ts";
import type { EventInput } from "../lib/obs/mod.ts";
import {
  assertEnvelopesCounted,
  assertIndexAgrees,
  cellsHolding,
  event,
  fileHolds,
  withErasureDb,
} from "./erasure_support.ts";
import { recordingDb } from "./_obs_recording.ts";

const SECRET = "RETAINSECRET pin 4417";
const DAY = 86_400_000;
const RECEIVED = Date.parse("2026-01-02T03:04:05.678Z");

const SECRET_EVENT = event("s1", {
  user_id: "uma",
  thread_id: "ts",
  started_at: new Date(RECEIVED).toISOString(),
  attributes: { "app.a": true },
  preview: SECRET,
});
// Dated and received after the secret event, inside the preview period
// when retention runs (received before it, it would expire by receipt).
const OTHER_RECEIVED = RECEIVED + 1.5 * DAY;
const OTHER_EVENT = event("o1", {
  user_id: "olga",
  started_at: new Date(OTHER_RECEIVED).toISOString(),
  preview: "OTHERTEXT stays",
});

function normalized(input: EventInput): NormalizedEvent {
  const result = normalizeEvent(input, 0);
  assert.ok("fingerprint" in result);
  return result;
}

const ORIGINAL = normalized(SECRET_EVENT);
const DIGESTS = [ORIGINAL.preview!.sha256, ORIGINAL.fingerprint];

async function ingestAll(db: TraceDb): Promise<void> {
  await ingestEvents(db, [SECRET_EVENT], { now: () => RECEIVED });
  await ingestEvents(db, [OTHER_EVENT], { now: () => OTHER_RECEIVED });
}

/** Preview retention at one day, two days after the secret event. */
async function retainPreviews(db: TraceDb, options: { dryRun?: boolean } = {}) {
  return await retention(db, {
    previewsDays: 1,
    dryRun: options.dryRun ?? false,
    now: () => RECEIVED + 2 * DAY,
  });
}

/** Asserts none of the secret's digests nor its text is in any cell, the file or its WAL. */
async function assertGone(db: TraceDb): Promise<void> {
  for (const needle of [...DIGESTS, "RETAINSECRET"]) {
    assert.deepEqual(await cellsHolding(db, needle), [], needle);
    assert.equal(await fileHolds(db.path!, needle), false, needle);
  }
}

async function fingerprints(db: TraceDb) {
  const result = await db.client.execute(
    `SELECT e.fingerprint AS row_fp, v.fingerprint AS env_fp, g.fingerprint AS grant_fp
     FROM obs_events e LEFT JOIN obs_envelopes v ON v.seq = e.seq
     LEFT JOIN obs_expiry_grants g ON g.seq = e.seq WHERE e.event_id = 's1'`,
  );
  const row = result.rows[0]!;
  return { row: row.row_fp, envelope: row.env_fp, grant: row.grant_fp };
}

Deno.test("preview retention leaves no digest of the removed preview in trace.db or its file", async () => {
  await withErasureDb(async (db) => {
    await ingestAll(db);
    await db.client.execute("PRAGMA wal_checkpoint(TRUNCATE)");
    for (const needle of [...DIGESTS, "RETAINSECRET"]) {
      assert.equal(await fileHolds(db.path!, needle), true, needle);
    }
    const counted = await retainPreviews(db, { dryRun: true });
    assert.equal(counted.previews, 1);
    assert.equal(counted.preview_digests, 1);

    const result = await retainPreviews(db);
    assert.equal(result.previews, 1);
    assert.equal(result.preview_digests, 1);
    await assertGone(db);

    const renewed = erasedFingerprint(ORIGINAL)!;
    assert.deepEqual(await fingerprints(db), {
      row: renewed,
      envelope: renewed,
      grant: null,
    });
    const body = await db.client.execute(
      "SELECT body FROM obs_envelopes WHERE event_id = 's1'",
    );
    assert.deepEqual(JSON.parse(String(body.rows[0]!.body)).event.preview, {
      chars: SECRET.length,
      erased: true,
      truncated: false,
    });
    // The newer event keeps its preview and its digest.
    assert.notDeepEqual(await cellsHolding(db, "OTHERTEXT"), []);
    await assertIndexAgrees(db);
    // A second run has nothing left to redact.
    assert.equal((await retainPreviews(db)).preview_digests, 0);
  });
});

Deno.test("a resend of an event after preview retention is a duplicate that restores nothing; a changed one is refused", async () => {
  await withErasureDb(async (db) => {
    await ingestAll(db);
    await retainPreviews(db);
    const resent = await ingestEvents(db, [SECRET_EVENT]);
    assert.equal(resent.inserted, 0);
    assert.equal(resent.duplicates, 1);
    const previews = await db.client.execute(
      "SELECT COUNT(*) AS n FROM obs_previews",
    );
    assert.equal(Number(previews.rows[0]!.n), 1, "only the newer event's");
    await assertGone(db);
    await assert.rejects(
      () => ingestEvents(db, [{ ...SECRET_EVENT, preview: "RETAINSECRET x" }]),
      /already stored with a different payload/,
    );
  });
});

Deno.test("preview retention renews the fingerprints an expired envelope left on its index row and grant; metadata retention removes the grant", async () => {
  await withErasureDb(async (db) => {
    await ingestAll(db);
    const plan = await planExpiry(db, {
      olderThan: OTHER_RECEIVED + 1,
      now: () => OTHER_RECEIVED + 10,
    });
    const expired = await applyExpiry(db, plan, plan.confirmation, () => true);
    assert.equal(expired.deleted, 2);
    assert.deepEqual(await fingerprints(db), {
      row: ORIGINAL.fingerprint,
      envelope: null,
      grant: ORIGINAL.fingerprint,
    });

    const result = await retainPreviews(db);
    assert.equal(result.preview_digests, 1);
    await assertGone(db);
    const renewed = erasedFingerprint(ORIGINAL)!;
    assert.deepEqual(await fingerprints(db), {
      row: renewed,
      envelope: null,
      grant: renewed,
    });
    const checked = await parity(db, { now: () => RECEIVED + 2 * DAY });
    assert.equal(checked.source_expired, 2);

    const later = await retention(db, {
      previewsDays: 1,
      metadataDays: 1,
      dryRun: false,
      now: () => RECEIVED + 2 * DAY,
    });
    assert.equal(later.events, 1);
    const grants = await db.client.execute(
      "SELECT seq FROM obs_expiry_grants ORDER BY seq",
    );
    assert.equal(grants.rows.length, 1, "only the kept row's grant stays");
    assert.deepEqual(await cellsHolding(db, renewed), []);
  });
});

Deno.test("retention redacts the digest a preview removed before left in its envelope, and grants with nothing left to vouch for", async () => {
  await withErasureDb(async (db) => {
    await ingestAll(db);
    // As an older retention left them: the preview gone, its digest kept.
    await db.client.execute(
      "DELETE FROM obs_previews WHERE seq = (SELECT seq FROM obs_events WHERE event_id = 's1')",
    );
    assert.notDeepEqual(await cellsHolding(db, ORIGINAL.preview!.sha256), []);
    const counted = await retainPreviews(db, { dryRun: true });
    assert.equal(counted.previews, 0);
    assert.equal(counted.preview_digests, 1);
    const result = await retainPreviews(db);
    assert.equal(result.preview_digests, 1);
    await assertGone(db);

    // A grant whose index row and envelope are both gone.
    await db.client.execute(
      "INSERT INTO obs_expiry_grants (seq, fingerprint, granted_at) VALUES (999, 'f00d', 1)",
    );
    await retainPreviews(db);
    assert.deepEqual(await cellsHolding(db, "f00d"), []);
  });
});

Deno.test("retention redacts the digest an envelope keeps after an older build's retention removed its index row and preview", async () => {
  await withErasureDb(async (db) => {
    await ingestAll(db);
    // As an older metadata retention left it: the index row and its preview
    // gone, the envelope (never deleted by retention) still naming the digest.
    await db.client.execute("DELETE FROM obs_events WHERE event_id = 's1'");
    await db.client.execute("PRAGMA wal_checkpoint(TRUNCATE)");
    assert.deepEqual(await cellsHolding(db, ORIGINAL.preview!.sha256), [
      "obs_envelopes.body",
    ]);
    const counted = await retainPreviews(db, { dryRun: true });
    assert.equal(counted.previews, 0);
    assert.equal(counted.preview_digests, 1);
    assert.equal(
      await unindexedDigestsCleared(db),
      false,
      "a dry run writes nothing",
    );

    const result = await retainPreviews(db);
    assert.equal(result.previews, 0, "the other preview is not due");
    assert.equal(result.preview_digests, 1);
    await assertGone(db);
    const stored = await db.client.execute(
      "SELECT fingerprint, body FROM obs_envelopes WHERE event_id = 's1'",
    );
    const row = stored.rows[0]!;
    assert.equal(row.fingerprint, erasedFingerprint(ORIGINAL));
    assert.deepEqual(JSON.parse(String(row.body)).event.preview, {
      chars: SECRET.length,
      erased: true,
      truncated: false,
    });
    await assertEnvelopesCounted(db);

    // The pass went through every envelope: later runs skip it.
    assert.equal(await unindexedDigestsCleared(db), true);
    assert.equal(
      (await retainPreviews(db, { dryRun: true })).preview_digests,
      0,
    );
  });
});

Deno.test("retention leaves an envelope without an index row alone when it names no preview", async () => {
  await withErasureDb(async (db) => {
    await ingestEvents(db, [
      event("p1", { started_at: SECRET_EVENT.started_at }),
    ], {
      now: () => RECEIVED,
    });
    await db.client.execute("DELETE FROM obs_events WHERE event_id = 'p1'");
    const read = "SELECT fingerprint, body FROM obs_envelopes";
    const before = (await db.client.execute(read)).rows;
    const result = await retainPreviews(db);
    assert.equal(result.preview_digests, 0);
    assert.deepEqual((await db.client.execute(read)).rows, before);
    assert.equal(await unindexedDigestsCleared(db), true);
  });
});

Deno.test("retention reads every envelope for older-build digests only until a pass found none left", async () => {
  await withErasureDb(async (db) => {
    await ingestAll(db);
    const unindexedReads = async () => {
      const recording = recordingDb(db);
      await retainPreviews(recording.db);
      return recording.client.statements.filter((statement) =>
        /NOT EXISTS \(SELECT 1 FROM obs_events e WHERE e\.seq = v\.seq\)/
          .test(statement.sql)
      ).length;
    };
    assert.ok(await unindexedReads() > 0);
    assert.equal(await unindexedDigestsCleared(db), true);
    assert.equal(await unindexedReads(), 0);
  });
});

/** True once retention recorded that no envelope without an index row names a preview digest. */
async function unindexedDigestsCleared(db: TraceDb): Promise<boolean> {
  const result = await db.client.execute(
    "SELECT 1 FROM obs_state WHERE key = 'retention.unindexed_digests_cleared'",
  );
  return result.rows.length > 0;
}

Deno.test("retention without reclaiming still checkpoints, so the removed preview leaves the database file", async () => {
  await withErasureDb(async (db) => {
    await ingestAll(db);
    await db.client.execute("PRAGMA wal_checkpoint(TRUNCATE)");
    const result = await retention(db, {
      previewsDays: 1,
      dryRun: false,
      reclaim: false,
      now: () => RECEIVED + 2 * DAY,
    });
    assert.equal(result.previews, 1);
    assert.equal(result.storage?.method, "none");
    await assertGone(db);
  });
});
