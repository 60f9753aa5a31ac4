/**
 * A content erasure removes previews and keeps envelopes. The envelope named
 * its preview by a plain SHA-256 of the text and its fingerprint is a
 * SHA-256 of that body, so a short text could be found again by hashing
 * guesses; after the erasure neither digest may be anywhere in trace.db.
 */

import assert from "node:assert/strict";
import type { TraceDb } from "../lib/db.ts";
import { verifyLedger } from "../lib/ledger/verify.ts";
import { ingestEvents } from "../lib/obs/ingest/mod.ts";
import type { EventInput } from "../lib/obs/mod.ts";
import {
  applyExpiry,
  parity,
  parseErasureSubject,
  planErasure,
  planExpiry,
} from "../lib/obs/maint/mod.ts";
import {
  erasedFingerprint,
  type NormalizedEvent,
  normalizeEvent,
} from "../lib/obs/normalize.ts";
import {
  enableErasurePropagation,
  eraseSubject,
  verifyErasure,
} from "../lib/runs/mod.ts";
import { createApp } from "../routes/app.ts";
import {
  assertIndexAgrees,
  cellsHolding,
  event,
  fileHolds,
  seed,
  TEST_KEY,
  withErasureDb,
} from "./erasure_support.ts";

const SECRET = "OTLPSECRET my ssn is 123-45-6789";
const USER = "uma-7c31";

const SECRET_EVENT = event("s1", {
  user_id: USER,
  memory_id: "mem-s",
  thread_id: "ts",
  kind: "memory_write",
  started_at: "2026-01-02T03:04:05.678Z",
  attributes: {
    "gen_ai.usage.input_tokens": 12,
    "app.z": "last",
    "app.a": true,
  },
  resources: [{ type: "document", id: "doc-s", role: "retrieved" }],
  selection: {
    strategy: "mmr",
    candidates: [{
      ref: { type: "document", id: "doc-s" },
      selected: true,
      rank: 0,
      reason: "mmr_rank",
    }],
  },
  preview: SECRET,
});

function normalized(input: EventInput): NormalizedEvent {
  const result = normalizeEvent(input, 0);
  assert.ok("fingerprint" in result);
  return result;
}

/** The preview digest and the fingerprints of `eventId` as stored now. */
async function storedDigests(db: TraceDb, eventId: string): Promise<string[]> {
  const result = await db.client.execute({
    sql: `SELECT p.sha256, e.fingerprint AS row_fp, v.fingerprint AS env_fp
          FROM obs_events e LEFT JOIN obs_previews p ON p.seq = e.seq
          LEFT JOIN obs_envelopes v ON v.seq = e.seq
          WHERE e.event_id = ?`,
    args: [eventId],
  });
  const row = result.rows[0]!;
  return [row.sha256, row.row_fp, row.env_fp]
    .filter((v) => v !== null)
    .map(String);
}

/** Asserts that none of `digests` (nor `text`) is in any cell, nor in the file or its WAL. */
async function assertGone(
  db: TraceDb,
  digests: readonly string[],
  text: string,
): Promise<void> {
  for (const needle of [...digests, text]) {
    assert.deepEqual(await cellsHolding(db, needle), [], needle);
    assert.equal(await fileHolds(db.path!, needle), false, needle);
  }
}

/** Asserts that each of `digests` and `text` is stored now (so the check after can see them). */
async function assertPresent(
  db: TraceDb,
  digests: readonly string[],
  text: string,
): Promise<void> {
  for (const needle of [...digests, text]) {
    assert.notDeepEqual(await cellsHolding(db, needle), [], needle);
    assert.equal(await fileHolds(db.path!, needle), true, needle);
  }
}

async function envelopeBody(db: TraceDb, eventId: string) {
  const result = await db.client.execute({
    sql: "SELECT body FROM obs_envelopes WHERE event_id = ?",
    args: [eventId],
  });
  return JSON.parse(String(result.rows[0]!.body));
}

async function previewCount(db: TraceDb, eventId: string): Promise<number> {
  const result = await db.client.execute({
    sql:
      `SELECT COUNT(*) AS n FROM obs_previews p JOIN obs_events e ON e.seq = p.seq
          WHERE e.event_id = ?`,
    args: [eventId],
  });
  return Number(result.rows[0]!.n);
}

const subject = parseErasureSubject({ application_id: "app", user_id: USER });

Deno.test("a content erasure takes every digest of the erased preview out of trace.db and its file", async () => {
  await withErasureDb(async (db) => {
    await seed(db);
    await seed(db, [SECRET_EVENT]);
    const original = normalized(SECRET_EVENT);
    const digests = [original.preview!.sha256, original.fingerprint];
    assert.deepEqual(
      (await storedDigests(db, "s1")).sort(),
      [original.preview!.sha256, original.fingerprint, original.fingerprint]
        .sort(),
    );
    await db.client.execute("PRAGMA wal_checkpoint(TRUNCATE)");
    await assertPresent(db, digests, "OTLPSECRET");
    const before = await envelopeBody(db, "s1");

    const plan = await planErasure(db, subject, {
      key: TEST_KEY,
      scope: "content",
    });
    assert.equal(plan.tables.preview_digests, 1);
    const { result, receipt } = await eraseSubject(
      db,
      subject,
      plan.confirmation,
      { key: TEST_KEY, scope: "content" },
    );
    assert.deepEqual(result.tables, {
      obs_previews: 1,
      obs_resources: 0,
      obs_events: 0,
      obs_envelopes: 0,
      preview_digests: 1,
    });
    assert.equal(receipt.receipt.tables.preview_digests, 1);
    assert.equal(result.reached_file, true);

    await assertGone(db, digests, "OTLPSECRET");
    // The envelope stays, metadata intact, its preview named by size only.
    const after = await envelopeBody(db, "s1");
    assert.deepEqual(after.event.preview, {
      chars: SECRET.length,
      erased: true,
      truncated: false,
    });
    assert.deepEqual(
      { ...after.event, preview: null },
      { ...before.event, preview: null },
    );
    const renewed = erasedFingerprint(original)!;
    assert.deepEqual(await storedDigests(db, "s1"), [renewed, renewed]);
    // Guessing the text gets nowhere: no candidate's digest is stored.
    for (const guess of ["6789", "6788", "0000"]) {
      const candidate = normalized({
        ...SECRET_EVENT,
        preview: `OTLPSECRET my ssn is 123-45-${guess}`,
      });
      assert.deepEqual(await cellsHolding(db, candidate.preview!.sha256), []);
      assert.deepEqual(await cellsHolding(db, candidate.fingerprint), []);
    }

    // Honest receipt, consistent index.
    const verified = await verifyErasure(
      db,
      receipt.receipt.receipt_id,
      subject,
      {
        key: TEST_KEY,
      },
    );
    assert.equal(verified.clean, true);
    assert.equal(verified.remaining.tables.preview_digests, 0);
    assert.equal((await verifyLedger(db)).ok, true);
    await assertIndexAgrees(db);
    // Other events keep their digests.
    const bob = await envelopeBody(db, "b1");
    assert.equal(typeof bob.event.preview.sha256, "string");
  });
});

Deno.test("a resend of an event whose preview was erased is a duplicate that restores nothing; a changed one is refused", async () => {
  await withErasureDb(async (db) => {
    await seed(db, [SECRET_EVENT]);
    const plan = await planErasure(db, subject, {
      key: TEST_KEY,
      scope: "content",
    });
    await eraseSubject(db, subject, plan.confirmation, {
      key: TEST_KEY,
      scope: "content",
    });
    const erased = await envelopeBody(db, "s1");

    const resent = await ingestEvents(db, [SECRET_EVENT]);
    assert.equal(resent.inserted, 0);
    assert.equal(resent.duplicates, 1);
    assert.equal(resent.items[0]!.duplicate, true);
    assert.equal(await previewCount(db, "s1"), 0);
    assert.deepEqual(await envelopeBody(db, "s1"), erased);
    assert.equal(await fileHolds(db.path!, "OTLPSECRET"), false);

    // Metadata that differs is still another payload.
    await assert.rejects(
      () => ingestEvents(db, [{ ...SECRET_EVENT, thread_id: "other" }]),
      /already stored with a different payload/,
    );
    // So is the event without its preview: the stored one had one.
    const { preview: _preview, ...bare } = SECRET_EVENT;
    await assert.rejects(
      () => ingestEvents(db, [bare]),
      /already stored with a different payload/,
    );
    // Envelopes stay immutable outside a reviewed erasure or expiry.
    await assert.rejects(
      () =>
        db.client.execute(
          "UPDATE obs_envelopes SET body = body WHERE event_id = 's1'",
        ),
      /immutable/,
    );
    await assert.rejects(
      () =>
        db.client.execute("DELETE FROM obs_envelopes WHERE event_id = 's1'"),
      /reviewed source expiry/,
    );
  });
});

Deno.test("an index row whose envelope source expiry removed gets the fingerprint of its redacted envelope, and its grant too", async () => {
  await withErasureDb(async (db) => {
    const receivedAt = Date.parse("2026-01-01T00:00:00Z");
    await ingestEvents(db, [SECRET_EVENT], { now: () => receivedAt });
    const original = normalized(SECRET_EVENT);
    const expiry = await planExpiry(db, {
      olderThan: receivedAt + 1,
      now: () => receivedAt + 10,
    });
    const expired = await applyExpiry(
      db,
      expiry,
      expiry.confirmation,
      () => true,
    );
    assert.equal(expired.deleted, 1);
    assert.equal(
      (await parity(db, { now: () => receivedAt + 20 })).source_expired,
      1,
    );

    const plan = await planErasure(db, subject, {
      key: TEST_KEY,
      scope: "content",
    });
    assert.equal(plan.tables.preview_digests, 1);
    const { result } = await eraseSubject(db, subject, plan.confirmation, {
      key: TEST_KEY,
      scope: "content",
    });
    assert.equal(result.tables.preview_digests, 1);
    await assertGone(
      db,
      [original.preview!.sha256, original.fingerprint],
      "OTLPSECRET",
    );
    const renewed = erasedFingerprint(original)!;
    const stored = await db.client.execute(
      `SELECT e.fingerprint AS row_fp, g.fingerprint AS grant_fp
       FROM obs_events e JOIN obs_expiry_grants g ON g.seq = e.seq`,
    );
    assert.deepEqual(
      [stored.rows[0]!.row_fp, stored.rows[0]!.grant_fp],
      [renewed, renewed],
    );
    const checked = await parity(db);
    assert.equal(checked.status, "ok");
    assert.equal(checked.source_expired, 1);
    // The rebuilt fingerprint is the one a resend computes: still a duplicate.
    const resent = await ingestEvents(db, [SECRET_EVENT]);
    assert.equal(resent.duplicates, 1);
    assert.equal(await previewCount(db, "s1"), 0);
  });
});

Deno.test("a content erasure redacts the digest of a preview an older retention removed without it", async () => {
  await withErasureDb(async (db) => {
    await ingestEvents(db, [SECRET_EVENT]);
    const original = normalized(SECRET_EVENT);
    // As retention left an event before it redacted envelopes: the preview
    // gone, the envelope still naming its digest.
    await db.client.execute("DELETE FROM obs_previews");
    assert.notDeepEqual(
      await cellsHolding(db, original.preview!.sha256),
      [],
    );

    const plan = await planErasure(db, subject, {
      key: TEST_KEY,
      scope: "content",
    });
    assert.equal(plan.events, 1);
    assert.equal(plan.tables.obs_previews, 0);
    assert.equal(plan.tables.preview_digests, 1);
    await eraseSubject(db, subject, plan.confirmation, {
      key: TEST_KEY,
      scope: "content",
    });
    await assertGone(
      db,
      [original.preview!.sha256, original.fingerprint],
      "OTLPSECRET",
    );
    const again = await planErasure(db, subject, {
      key: TEST_KEY,
      scope: "content",
    });
    assert.equal(again.events, 0);
  });
});

Deno.test("a memory deletion over OTLP leaves no digest of the erased preview in trace.db", async () => {
  await withErasureDb(async (db) => {
    const stop = enableErasurePropagation({ key: TEST_KEY, byDefault: true });
    try {
      const app = createApp({ db });
      const attribute = (key: string, value: string) => ({
        key,
        value: { stringValue: value },
      });
      const span = (id: string, operation: string, extra: object[]) => ({
        traceId: "0af7651916cd43dd8448eb211c80319c",
        spanId: id,
        name: operation,
        startTimeUnixNano: "1700000000000000000",
        endTimeUnixNano: "1700000000100000000",
        status: { code: 1 },
        attributes: [
          attribute("gen_ai.operation.name", operation),
          attribute("user.id", USER),
          ...extra,
        ],
      });
      const post = async (spans: object[]) => {
        const response = await app.request("http://127.0.0.1/v1/traces", {
          method: "POST",
          headers: { "content-type": "application/json", host: "127.0.0.1" },
          body: JSON.stringify({
            resourceSpans: [{
              resource: {
                attributes: [
                  attribute("tenant.id", "app-3"),
                  attribute("service.name", "memory-service"),
                ],
              },
              scopeSpans: [{ spans }],
            }],
          }),
        });
        assert.equal(response.status, 200, await response.text());
      };
      await post([
        span("00f067aa0ba902b1", "create_memory", [
          attribute("gen_ai.memory.content", SECRET),
        ]),
      ]);
      const stored = await db.client.execute(
        `SELECT p.sha256, v.fingerprint FROM obs_previews p
         JOIN obs_envelopes v ON v.seq = p.seq`,
      );
      const digests = [
        String(stored.rows[0]!.sha256),
        String(stored.rows[0]!.fingerprint),
      ];
      await db.client.execute("PRAGMA wal_checkpoint(TRUNCATE)");
      await assertPresent(db, digests, "OTLPSECRET");

      await post([span("00f067aa0ba902b2", "delete_memory", [])]);
      await assertGone(db, digests, "OTLPSECRET");
      const left = await db.client.execute(
        "SELECT COUNT(*) AS n FROM obs_envelopes",
      );
      assert.equal(Number(left.rows[0]!.n), 2, "metadata stays");
      assert.equal((await parity(db)).status, "ok");
    } finally {
      stop();
    }
  });
});
