/** An erasure names the source expiry archives that hold its subject's envelopes, deleted since or not. */

import assert from "node:assert/strict";
import { join } from "node:path";
import type { Hono } from "hono";
import { migrate, openDb, type TraceDb } from "../lib/db.ts";
import { RefusedError, StorageError } from "../lib/errors.ts";
import { ALL_MIGRATIONS } from "../lib/migrations.ts";
import { ingestEvents } from "../lib/obs/ingest/mod.ts";
import {
  applyErasure,
  applyExpiry,
  type ArchiveCallback,
  directoryArchive,
  type ErasurePlan,
  type ExpiredEnvelopes,
  parseErasureSubject,
  planErasure,
  planExpiry,
  retention,
} from "../lib/obs/maint/mod.ts";
import { initializeObs } from "../lib/obs/mod.ts";
import { createApp } from "../routes/app.ts";
import { withTempDir } from "./_helpers.ts";
import {
  event,
  expiredUnrecorded,
  TEST_KEY,
  UNDO_VERSION_7,
  withErasureDb,
} from "./erasure_support.ts";

const DAY = 86_400_000;
const daysAgo = (days: number) => Date.now() - days * DAY;
const ALICE = parseErasureSubject({ application_id: "app", user_id: "alice" });

/** Events of alice (a1..a3) and bob (b1), received `days` days ago. */
async function ingestAt(db: TraceDb, ids: string[], days: number) {
  const user = (id: string) => id.startsWith("a") ? "alice" : "bob";
  await ingestEvents(
    db,
    ids.map((id) => event(id, { user_id: user(id), preview: `text of ${id}` })),
    { now: () => daysAgo(days) },
  );
}

/** Plans the expiry of envelopes received more than `days` days ago and applies it into `archive`. */
async function expire(db: TraceDb, days: number, archive: ArchiveCallback) {
  const plan = await planExpiry(db, { olderThan: daysAgo(days) });
  const result = await applyExpiry(db, plan, plan.confirmation, archive);
  assert.equal(result.status, "applied");
  return result;
}

/** A directory archive into `dir` that remembers the file it wrote. */
function archiveInto(dir: string, label: string) {
  const written: string[] = [];
  const archive = directoryArchive(dir, label, (w) => written.push(w.path));
  return { archive, written };
}

function expiredOf(answer: ExpiredEnvelopes): ExpiredEnvelopes {
  // The counts add up as documented (docs/erasure.md, the dry run).
  assert.equal(
    answer.expired_envelopes + answer.archived_unexpired,
    answer.archived_envelopes + answer.expired_unrecorded,
  );
  return {
    expired_envelopes: answer.expired_envelopes,
    archived_envelopes: answer.archived_envelopes,
    archived_unexpired: answer.archived_unexpired,
    expired_archives: answer.expired_archives,
    expired_unnamed: answer.expired_unnamed,
    expired_unrecorded: answer.expired_unrecorded,
  };
}

async function grants(db: TraceDb): Promise<number> {
  const result = await db.client.execute(
    "SELECT COUNT(*) AS n FROM obs_expiry_grants",
  );
  return Number(result.rows[0]!.n);
}

/** The archive records, as `event_id location` pairs. */
async function records(db: TraceDb): Promise<string[]> {
  const result = await db.client.execute(
    `SELECT a.seq, a.location, COALESCE(e.event_id, v.event_id) AS event_id
       FROM obs_archived_envelopes a
       LEFT JOIN obs_events e ON e.seq = a.seq
       LEFT JOIN obs_envelopes v ON v.seq = a.seq
       ORDER BY a.seq, a.location`,
  );
  return result.rows.map((row) =>
    `${row.event_id ?? `seq ${row.seq}`} ${row.location}`
  );
}

/**
 * Applies the expiry of envelopes older than `days` days into `archive`,
 * one envelope per batch, and stops it after `batches` batches, as a
 * Ctrl-C between batches does. Returns the plan, to apply it again.
 */
async function interruptedExpiry(
  db: TraceDb,
  days: number,
  archive: ArchiveCallback,
  batches: number,
) {
  const plan = await planExpiry(db, { olderThan: daysAgo(days) });
  // One look before the archive, one before each batch.
  let looks = 0;
  const signal = {
    get aborted() {
      return ++looks > 1 + batches;
    },
  } as AbortSignal;
  const result = await applyExpiry(db, plan, plan.confirmation, archive, {
    batchSize: 1,
    signal,
  });
  assert.equal(result.interrupted, true);
  assert.equal(result.deleted, batches);
  assert.equal(result.archived, plan.entries.length);
  return plan;
}

Deno.test("an erasure names the archive file a source expiry wrote the subject's envelopes to, with their count", async () => {
  await withErasureDb(async (db, dir) => {
    await ingestAt(db, ["a1", "a2", "b1"], 100);
    await ingestAt(db, ["a3"], 1);
    const { archive, written } = archiveInto(join(dir, "archive"), "p1");
    await expire(db, 30, archive);
    assert.equal(written.length, 1);
    const expected = {
      expired_envelopes: 2,
      archived_envelopes: 2,
      archived_unexpired: 0,
      expired_archives: [{ location: written[0]!, envelopes: 2 }],
      expired_unnamed: 0,
      expired_unrecorded: 0,
    };
    const plan = await planErasure(db, ALICE, { key: TEST_KEY });
    assert.deepEqual(expiredOf(plan), expected);
    const result = await applyErasure(db, ALICE, plan.confirmation, {
      key: TEST_KEY,
    });
    assert.deepEqual(expiredOf(result), expected);
    // The records go with the erased events, as their grants do; bob's stay.
    assert.equal(await grants(db), 1);
    assert.deepEqual(await records(db), [`b1 ${written[0]!}`]);
  });
});

Deno.test("an erasure names the file of an expiry apply stopped between batches, for the envelopes it did not delete too", async () => {
  await withErasureDb(async (db, dir) => {
    await ingestAt(db, ["a1", "a2", "b1", "a3"], 100);
    const { archive, written } = archiveInto(join(dir, "archive"), "p1");
    // a1 and a2 deleted; b1 and a3 archived but still in the index.
    await interruptedExpiry(db, 30, archive, 2);
    assert.equal(written.length, 1);
    const file = written[0]!;
    assert.deepEqual(await records(db), [
      `a1 ${file}`,
      `a2 ${file}`,
      `b1 ${file}`,
      `a3 ${file}`,
    ]);
    const expected = {
      expired_envelopes: 2,
      archived_envelopes: 3,
      archived_unexpired: 1,
      expired_archives: [{ location: file, envelopes: 3 }],
      expired_unnamed: 0,
      expired_unrecorded: 0,
    };
    const plan = await planErasure(db, ALICE, { key: TEST_KEY });
    assert.deepEqual(expiredOf(plan), expected);
    assert.equal(plan.tables.obs_envelopes, 1, "a3's envelope is still there");
    const result = await applyErasure(db, ALICE, plan.confirmation, {
      key: TEST_KEY,
    });
    assert.deepEqual(expiredOf(result), expected);
    assert.deepEqual(await records(db), [`b1 ${file}`]);
  });
});

Deno.test("an erasure names both files of an expiry apply stopped between batches and applied again", async () => {
  await withErasureDb(async (db, dir) => {
    await ingestAt(db, ["a1", "a2", "a3", "b1"], 100);
    const { archive, written } = archiveInto(join(dir, "archive"), "p1");
    const plan = await interruptedExpiry(db, 30, archive, 1);
    // Archive names carry the time to the millisecond.
    await new Promise((resolve) => setTimeout(resolve, 5));
    const again = await applyExpiry(db, plan, plan.confirmation, archive);
    assert.equal(again.status, "applied");
    assert.equal(again.already_deleted, 1);
    assert.equal(written.length, 2);
    const [first, second] = written as [string, string];
    const answer = await planErasure(db, ALICE, { key: TEST_KEY });
    // a2 and a3 are in both files: each file counts them.
    assert.deepEqual(expiredOf(answer), {
      expired_envelopes: 3,
      archived_envelopes: 3,
      archived_unexpired: 0,
      expired_archives: [
        { location: first, envelopes: 3 },
        { location: second, envelopes: 2 },
      ],
      expired_unnamed: 0,
      expired_unrecorded: 0,
    });
    await applyErasure(db, ALICE, answer.confirmation, { key: TEST_KEY });
    assert.deepEqual(await records(db), [`b1 ${first}`, `b1 ${second}`]);
  });
});

Deno.test("an erasure of scope content names the archive files and keeps their records", async () => {
  await withErasureDb(async (db, dir) => {
    await ingestAt(db, ["a1", "a2"], 100);
    const { archive, written } = archiveInto(join(dir, "archive"), "p1");
    await interruptedExpiry(db, 30, archive, 1);
    const before = await records(db);
    const options = { key: TEST_KEY, scope: "content" as const };
    const plan = await planErasure(db, ALICE, options);
    const result = await applyErasure(db, ALICE, plan.confirmation, options);
    assert.deepEqual(result.expired_archives, [
      { location: written[0]!, envelopes: 2 },
    ]);
    assert.equal(result.archived_unexpired, 1);
    assert.deepEqual(await records(db), before);
  });
});

Deno.test("retention removes an archive record with its index row, once the envelope is gone too", async () => {
  await withErasureDb(async (db, dir) => {
    await ingestAt(db, ["a1", "a2", "a3"], 100);
    await ingestAt(db, ["b1"], 1);
    const { archive, written } = archiveInto(join(dir, "archive"), "p1");
    // a1 deleted; a2 and a3 archived but still in the index.
    await interruptedExpiry(db, 30, archive, 1);
    const file = written[0]!;
    await retention(db, { dryRun: false, reclaim: false });
    // a1 is gone from the index; a2 and a3 keep their envelopes, by which
    // an erasure still matches them, so their records stay.
    assert.deepEqual(await records(db), [`a2 ${file}`, `a3 ${file}`]);
    const answer = await planErasure(db, ALICE, { key: TEST_KEY });
    assert.equal(answer.events, 2);
    assert.deepEqual(answer.expired_archives, [{
      location: file,
      envelopes: 2,
    }]);
    // Retention redacted their preview digests, so a new plan expires them,
    // into a second file; the next retention drops their records.
    await new Promise((resolve) => setTimeout(resolve, 5));
    await expire(db, 30, archive);
    assert.equal(written.length, 2);
    assert.equal((await records(db)).length, 4);
    await retention(db, { dryRun: false, reclaim: false });
    assert.deepEqual(await records(db), []);
    assert.equal(
      (await planErasure(db, ALICE, { key: TEST_KEY })).events,
      0,
      "nothing of alice is left to match",
    );
  });
});

Deno.test("an erasure names both archive files of two applies into two directories", async () => {
  await withErasureDb(async (db, dir) => {
    await ingestAt(db, ["a1", "b1"], 100);
    await ingestAt(db, ["a2", "a3"], 50);
    const first = archiveInto(join(dir, "one"), "p1");
    const second = archiveInto(join(dir, "two"), "p2");
    await expire(db, 70, first.archive);
    await expire(db, 30, second.archive);
    const plan = await planErasure(db, ALICE, { key: TEST_KEY });
    assert.equal(plan.expired_envelopes, 3);
    assert.deepEqual(
      plan.expired_archives,
      [
        { location: first.written[0]!, envelopes: 1 },
        { location: second.written[0]!, envelopes: 2 },
      ].sort((a, b) => a.location < b.location ? -1 : 1),
    );
  });
});

Deno.test("an archive callback that answers true is counted as unnamed, one that names a location is named", async () => {
  await withErasureDb(async (db) => {
    await ingestAt(db, ["a1"], 100);
    await expire(db, 30, () => true);
    await ingestAt(db, ["a2"], 50);
    await expire(db, 30, () => ({ archived: true, location: "s3://bk/x" }));
    const plan = await planErasure(db, ALICE, { key: TEST_KEY });
    assert.deepEqual(expiredOf(plan), {
      expired_envelopes: 2,
      archived_envelopes: 2,
      archived_unexpired: 0,
      expired_archives: [{ location: "s3://bk/x", envelopes: 1 }],
      expired_unnamed: 1,
      expired_unrecorded: 0,
    });
  });
});

Deno.test("applyExpiry() refuses an archive receipt naming an unusable location, deleting nothing", async (t) => {
  await withErasureDb(async (db) => {
    await ingestAt(db, ["a1"], 100);
    const plan = await planExpiry(db, { olderThan: daysAgo(30) });
    for (const location of ["", "a\nb", "x".repeat(4_097)]) {
      await t.step(JSON.stringify(location.slice(0, 8)), async () => {
        await assert.rejects(
          applyExpiry(db, plan, plan.confirmation, () => ({
            archived: true,
            location,
          })),
          (error: Error) =>
            error instanceof RefusedError &&
            error.message.includes("named an unusable location"),
        );
        assert.equal(await grants(db), 0);
      });
    }
  });
});

Deno.test("applyExpiry() deletes nothing when it cannot record which envelopes its archive holds", async () => {
  await withErasureDb(async (db) => {
    await ingestAt(db, ["a1", "a2"], 100);
    const plan = await planExpiry(db, { olderThan: daysAgo(30) });
    await assert.rejects(
      applyExpiry(db, plan, plan.confirmation, async () => {
        // The record's table goes while the archive writes: its insert fails.
        await db.client.execute("DROP TABLE obs_archived_envelopes");
        return { archived: true, location: "s3://bk/x" };
      }),
      (error: Error) =>
        error instanceof StorageError &&
        error.message.includes("recording where it keeps them failed") &&
        error.message.endsWith(
          "nothing was deleted, so the index still holds every one: remove the archive s3://bk/x, then apply again",
        ),
    );
    assert.equal(await grants(db), 0);
    const left = await db.client.execute(
      "SELECT COUNT(*) AS n FROM obs_envelopes",
    );
    assert.equal(Number(left.rows[0]!.n), 2);
  });
});

Deno.test("an index upgraded from version 6 counts envelopes expired before as unrecorded", async () => {
  await withTempDir(async (dir) => {
    const old = await openDb({ dataDir: dir });
    try {
      await migrate(old, ALL_MIGRATIONS);
      await ingestAt(old, ["a1", "a2"], 100);
      // Back to version 6 as it was, then an expiry as a version 6 build
      // made it: a grant without a location, then the delete.
      await old.client.batch(
        [...UNDO_VERSION_7, ...expiredUnrecorded("a1")],
        "write",
      );
    } finally {
      old.close();
    }
    const db = await openDb({ dataDir: dir });
    try {
      assert.deepEqual(await initializeObs(db), [7]);
      const { archive, written } = archiveInto(join(dir, "archive"), "p1");
      await expire(db, 30, archive);
      const plan = await planErasure(db, ALICE, { key: TEST_KEY });
      assert.deepEqual(expiredOf(plan), {
        expired_envelopes: 2,
        archived_envelopes: 1,
        archived_unexpired: 0,
        expired_archives: [{ location: written[0]!, envelopes: 1 }],
        expired_unnamed: 0,
        expired_unrecorded: 1,
      });
    } finally {
      db.close();
    }
  });
});

Deno.test("POST /api/erasures names the archive files in its dry run and its apply", async () => {
  await withErasureDb(async (db, dir) => {
    await ingestAt(db, ["a1"], 100);
    const { archive, written } = archiveInto(join(dir, "archive"), "p1");
    await expire(db, 30, archive);
    const admin = "admin-token-0123456789";
    const app = createApp({
      db,
      ingestToken: "ingest-token-0123456789",
      uiAuthToken: admin,
      erasureKey: TEST_KEY,
    });
    const post = (body: unknown) =>
      Promise.resolve((app as Hono).request("http://127.0.0.1/api/erasures", {
        method: "POST",
        headers: {
          "content-type": "application/json",
          authorization: `Bearer ${admin}`,
        },
        body: JSON.stringify(body),
      }));
    const subject = { application_id: "app", user_id: "alice" };
    const named = [{ location: written[0]!, envelopes: 1 }];
    const dry = await post({ subject });
    assert.equal(dry.status, 200);
    const plan: ErasurePlan = await dry.json();
    assert.deepEqual(plan.expired_archives, named);
    const applied = await post({
      subject,
      apply: true,
      confirmation: plan.confirmation,
    });
    assert.equal(applied.status, 200);
    assert.deepEqual((await applied.json()).result.expired_archives, named);
  });
});
