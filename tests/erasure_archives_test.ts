/** An erasure names the source expiry archives that still hold its subject's envelopes. */

import assert from "node:assert/strict";
import { join } from "node:path";
import type { Hono } from "hono";
import { migrate, openDb, type TraceDb } from "../lib/db.ts";
import { RefusedError } from "../lib/errors.ts";
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
} from "../lib/obs/maint/mod.ts";
import { initializeObs } from "../lib/obs/mod.ts";
import { createApp } from "../routes/app.ts";
import { withTempDir } from "./_helpers.ts";
import { event, TEST_KEY, withErasureDb } from "./erasure_support.ts";

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
  return {
    expired_envelopes: answer.expired_envelopes,
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

Deno.test("an erasure names the archive file a source expiry wrote the subject's envelopes to, with their count", async () => {
  await withErasureDb(async (db, dir) => {
    await ingestAt(db, ["a1", "a2", "b1"], 100);
    await ingestAt(db, ["a3"], 1);
    const { archive, written } = archiveInto(join(dir, "archive"), "p1");
    await expire(db, 30, archive);
    assert.equal(written.length, 1);
    const expected = {
      expired_envelopes: 2,
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
    // The record goes with the erased events' grants; bob's stays.
    assert.equal(await grants(db), 1);
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

Deno.test("an index upgraded to version 7 counts envelopes expired before as unrecorded", async () => {
  await withTempDir(async (dir) => {
    const old = await openDb({ dataDir: dir });
    try {
      await migrate(old, ALL_MIGRATIONS);
      await ingestAt(old, ["a1", "a2"], 100);
      // Back to version 6 as it was, then an expiry as a version 6 build
      // made it: a grant without a location, then the delete.
      await old.client.batch([
        "ALTER TABLE obs_expiry_grants DROP COLUMN archive",
        "DROP TRIGGER obs_counts_erased_event_insert",
        "DELETE FROM schema_migrations WHERE component = 'obs' AND version = 7",
        `INSERT INTO obs_expiry_grants (seq, fingerprint, granted_at)
           SELECT seq, fingerprint, 0 FROM obs_envelopes WHERE event_id = 'a1'`,
        "DELETE FROM obs_envelopes WHERE event_id = 'a1'",
      ], "write");
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
