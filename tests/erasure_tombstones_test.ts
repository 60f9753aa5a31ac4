/**
 * An erased event id stays erased: an erasure of scope `all` leaves a
 * tombstone per event it removed, and a resend of one of those events
 * (through `trace events ingest`, the HTTP ingest API, the write thread or
 * the libSQL client) is a duplicate that writes nothing, while new ids of
 * the same subject and the same id in another application still ingest.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { main } from "../cli.ts";
import { migrate, openDb, openMemoryDb, type TraceDb } from "../lib/db.ts";
import { ALL_MIGRATIONS } from "../lib/migrations.ts";
import { ingestEvents, startWriteThread } from "../lib/obs/ingest/mod.ts";
import { writeThreadOf } from "../lib/obs/ingest/write_thread.ts";
import {
  eraseNow,
  obsHealth,
  parseErasureSubject,
} from "../lib/obs/maint/mod.ts";
import { erasureKeyFor, planSubjectErasure } from "../lib/runs/mod.ts";
import { initializeObs, OBS_MIGRATIONS } from "../lib/obs/mod.ts";
import {
  TOMBSTONE_SALT_KEY,
  tombstoneDigester,
} from "../lib/obs/erased_events.ts";
import { createHmac } from "node:crypto";
import { createApp } from "../routes/app.ts";
import { captureIo, withTempDir } from "./_helpers.ts";
import {
  event,
  indexedIds,
  SEED,
  seed,
  tableCounts,
  TEST_KEY,
  UNDO_VERSION_7,
  withErasureDb,
} from "./erasure_support.ts";

const ADMIN = "admin-token-0123456789";

async function trace(args: string[], stdin = "") {
  const io = captureIo(stdin, {});
  const code = await main(args, io);
  return { code, out: io.stdout(), err: io.stderr() };
}

function eraseEventIds(db: TraceDb, ids: string[], application = "app") {
  return eraseNow(
    db,
    parseErasureSubject({ application_id: application, event_ids: ids }),
    { key: TEST_KEY },
  );
}

async function tombstones(db: TraceDb): Promise<number> {
  const result = await db.client.execute(
    "SELECT COUNT(*) AS n FROM obs_erased_events",
  );
  return Number(result.rows[0]!.n);
}

Deno.test("trace events ingest: a resent file after an erasure of event ids writes nothing and --verify stays clean", async () => {
  await withTempDir(async (dir) => {
    const data = ["--data-dir", join(dir, "data")];
    assert.equal((await trace(["obs", "init", ...data])).code, 0);
    const ndjson = SEED.map((e) => JSON.stringify(e)).join("\n");
    const first = await trace(["events", "ingest", "-", ...data], ndjson);
    assert.equal(first.code, 0, first.err);
    const ids = join(dir, "ids.txt");
    await Deno.writeTextFile(ids, "a1\nb1\n");
    const subject = ["--application", "app", "--event-ids", ids];
    const dry = await trace(["obs", "erase", ...subject, ...data]);
    assert.equal(dry.code, 0, dry.err);
    const confirmation = /--apply --confirm "([^"]+)"/.exec(dry.out)![1]!;
    const applied = await trace([
      "obs",
      "erase",
      ...subject,
      "--apply",
      "--confirm",
      confirmation,
      ...data,
    ]);
    assert.equal(applied.code, 0, applied.err);
    const receipt = /Receipt (erasure-\S+):/.exec(applied.out)![1]!;

    // The producer replays the whole file: the erased events are answered
    // as identical retries, like every event still stored.
    const resent = await trace(
      ["events", "ingest", "-", "--json", ...data],
      ndjson,
    );
    assert.equal(resent.code, 0, resent.err);
    const answer = JSON.parse(resent.out);
    assert.equal(answer.inserted, 0);
    assert.equal(answer.duplicates, SEED.length);
    const text = await trace(["events", "ingest", "-", ...data], ndjson);
    assert.match(text.out, /8 identical retries/);

    const verify = await trace([
      "obs",
      "erase",
      "--verify",
      receipt,
      ...subject,
      ...data,
    ]);
    assert.equal(verify.code, 0, verify.out + verify.err);
    assert.doesNotMatch(verify.out, /written after/);
    assert.match(verify.out, /nothing of it remains/);
    const db = await openDb({ dataDir: join(dir, "data") });
    try {
      assert.deepEqual(await indexedIds(db), ["a2", "a3", "m1", "n1", "n2"]);
      assert.equal((await tableCounts(db)).obs_envelopes, 6);
    } finally {
      db.close();
    }
  });
});

Deno.test("a dry run of ids an earlier erasure of another list removed says so, from their tombstones, in the CLI and the API", async () => {
  await withErasureDb(async (db) => {
    await seed(db);
    await eraseEventIds(db, ["a1", "b1"]);
    const plan = (ids: string[]) =>
      planSubjectErasure(
        db,
        parseErasureSubject({ application_id: "app", event_ids: ids }),
        { key: TEST_KEY },
      );
    const mixed = await plan(["a1", "typo-9", "a2"]);
    assert.deepEqual(mixed.unmatched_event_ids, ["a1", "typo-9"]);
    assert.deepEqual(mixed.erased_event_ids, ["a1"]);
    const none = await plan(["b1"]);
    assert.equal(
      none.earlier_receipt_id,
      null,
      "another list than the receipt's",
    );
    assert.deepEqual(none.erased_event_ids, ["b1"]);
    assert.deepEqual((await plan(["a2"])).erased_event_ids, []);

    const app = createApp({ db, uiAuthToken: ADMIN, erasureKey: TEST_KEY });
    const answer = await app.request("http://127.0.0.1/api/erasures", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: `Bearer ${ADMIN}`,
      },
      body: JSON.stringify({
        subject: { application_id: "app", event_ids: ["b1", "typo-9"] },
      }),
    });
    const body = await answer.json();
    assert.deepEqual(body.erased_event_ids, ["b1"]);
    assert.match(
      body.next,
      /^no event has these ids, so there is nothing to apply: an earlier erasure removed 1 of the 2 \(the index keeps a tombstone of each\); check the others/,
    );
  });
  await withTempDir(async (dir) => {
    const data = ["--data-dir", join(dir, "data")];
    assert.equal((await trace(["obs", "init", ...data])).code, 0);
    const ndjson = SEED.map((e) => JSON.stringify(e)).join("\n");
    assert.equal(
      (await trace(["events", "ingest", "-", ...data], ndjson)).code,
      0,
    );
    const db = await openDb({ dataDir: join(dir, "data") });
    try {
      await eraseNow(
        db,
        parseErasureSubject({ application_id: "app", event_ids: ["a1", "b1"] }),
        { key: await erasureKeyFor(db, join(dir, "data")) },
      );
    } finally {
      db.close();
    }
    const ids = join(dir, "ids.txt");
    await Deno.writeTextFile(ids, "b1\n");
    const dry = await trace([
      "obs",
      "erase",
      "--application",
      "app",
      "--event-ids",
      ids,
      ...data,
    ]);
    assert.equal(dry.code, 0, dry.err);
    assert.match(
      dry.out,
      /of them, an earlier erasure removed 1 \(the index keeps a tombstone of each\): "b1"/,
    );
    assert.match(
      dry.out,
      /Nothing was changed, and no event has these ids any more, so there is nothing to apply: an earlier erasure removed it, and the index keeps its tombstone; trace obs erase --receipts lists the receipts/,
    );
  });
});

Deno.test("POST /api/events answers a resent erased event as a duplicate and writes nothing", async () => {
  await withErasureDb(async (db) => {
    await seed(db);
    const app = createApp({ db, uiAuthToken: ADMIN, erasureKey: TEST_KEY });
    const erasure = (body: unknown) =>
      app.request("http://127.0.0.1/api/erasures", {
        method: "POST",
        headers: {
          "content-type": "application/json",
          authorization: `Bearer ${ADMIN}`,
        },
        body: JSON.stringify(body),
      });
    const subject = { application_id: "app", event_ids: ["a2"] };
    const plan = await (await erasure({ subject })).json();
    const applied = await erasure({
      subject,
      apply: true,
      confirmation: plan.confirmation,
    });
    assert.equal(applied.status, 200);
    const before = await tableCounts(db);

    const resent = await app.request("http://127.0.0.1/api/events", {
      method: "POST",
      headers: { "content-type": "application/json", host: "127.0.0.1" },
      body: JSON.stringify([SEED[1]]),
    });
    assert.equal(resent.status, 200);
    const answer = await resent.json();
    assert.equal(answer.inserted, 0);
    assert.equal(answer.duplicates, 1);
    assert.equal(answer.items[0].duplicate, true);
    assert.deepEqual(await tableCounts(db), before);
    assert.equal((await indexedIds(db)).includes("a2"), false);
  });
});

Deno.test("the write thread answers a resent erased event as a duplicate", async () => {
  await withErasureDb(async (db) => {
    await seed(db);
    const thread = await startWriteThread(db);
    try {
      await eraseEventIds(db, ["a1"]);
      const sent = writeThreadOf(db)!.writesSent;
      const resent = await ingestEvents(db, [SEED[0], event("fresh")]);
      assert.ok(writeThreadOf(db)!.writesSent > sent, "written on the thread");
      assert.deepEqual(
        resent.items.map((i) => [i.event_id, i.duplicate]),
        [["a1", true], ["fresh", false]],
      );
    } finally {
      await thread.stop();
    }
    assert.equal((await indexedIds(db)).includes("a1"), false);
  });
});

Deno.test("a database written through the libSQL client keeps erased events erased", async () => {
  const db = openMemoryDb();
  try {
    await migrate(db, ALL_MIGRATIONS);
    await seed(db);
    await eraseEventIds(db, ["b1"]);
    const resent = await ingestEvents(db, [SEED[3]]);
    assert.deepEqual([resent.inserted, resent.duplicates], [0, 1]);
    assert.equal((await indexedIds(db)).includes("b1"), false);
  } finally {
    db.close();
  }
});

Deno.test("after a user erasure, new events of the user and the same ids elsewhere still ingest", async () => {
  await withErasureDb(async (db) => {
    await seed(db);
    const erased = await eraseNow(
      db,
      parseErasureSubject({ application_id: "app", user_id: "alice" }),
      { key: TEST_KEY },
    );
    assert.equal(erased.events, 3);
    assert.equal(await tombstones(db), 3);

    // Concurrent batches share a group transaction: each decides alone.
    const [resend, changed, fresh, elsewhere] = await Promise.all([
      ingestEvents(db, SEED.slice(0, 3)),
      // The erased payload is gone, so a changed one cannot be compared: still a duplicate.
      ingestEvents(db, [{ ...SEED[0]!, preview: "a different text" }]),
      ingestEvents(db, [event("a9", { user_id: "alice", preview: "new" })]),
      ingestEvents(db, [event("a1", { application_id: "other-app" })]),
    ]);
    assert.deepEqual([resend.inserted, resend.duplicates], [0, 3]);
    assert.deepEqual([changed.inserted, changed.duplicates], [0, 1]);
    assert.deepEqual([fresh.inserted, fresh.duplicates], [1, 0]);
    assert.deepEqual([elsewhere.inserted, elsewhere.duplicates], [1, 0]);
    assert.deepEqual(await indexedIds(db), ["a9", "b1", "m1", "n1", "n2"]);
    assert.deepEqual(await indexedIds(db, "other-app"), ["a1"]);

    // A tombstone keeps no readable id, and retention never removes one.
    const rows = await db.client.execute(
      "SELECT application_id, digest FROM obs_erased_events",
    );
    for (const row of rows.rows) {
      assert.equal(row.application_id, "app");
      assert.match(String(row.digest), /^[0-9a-f]{64}$/);
    }
    await assert.rejects(
      db.client.execute("DELETE FROM obs_erased_events"),
      /never removed/,
    );
  });
});

Deno.test("tombstoneDigester() is HMAC-SHA256 of the application and event id under the salt", () => {
  const salt = crypto.getRandomValues(new Uint8Array(32));
  const digest = tombstoneDigester(salt);
  for (
    const [app, id] of [["app", "a1"], ["", ""], ["ä-app", "é".repeat(300)]]
  ) {
    assert.equal(
      digest(app!, id!),
      createHmac("sha256", salt).update(`${app}\0${id}`).digest("hex"),
    );
  }
  assert.notEqual(digest("app", "a1"), digest("ap", "pa1"));
});

Deno.test("an erasure of scope content leaves no tombstone", async () => {
  await withErasureDb(async (db) => {
    await seed(db);
    await eraseNow(
      db,
      parseErasureSubject({ application_id: "app", user_id: "bob" }),
      { key: TEST_KEY, scope: "content" },
    );
    assert.equal(await tombstones(db), 0);
  });
});

Deno.test("initializeObs() upgrades a version 5 index with tombstones and a salt of its own", async () => {
  await withTempDir(async (dir) => {
    const old = await openDb({ dataDir: join(dir, "old") });
    try {
      await migrate(old, ALL_MIGRATIONS.filter((m) => m.component !== "obs"));
      await migrate(old, OBS_MIGRATIONS.filter((m) => m.version <= 5));
      // Rows as a version 5 build wrote them.
      await old.client.execute(
        `INSERT INTO obs_envelopes (seq, application_id, event_id, store, source, fingerprint, body, received_at)
         VALUES (1, 'app', 'old-1', 'trace', 'api', 'f', '{}', 0)`,
      );
    } finally {
      old.close();
    }
    const db = await openDb({ dataDir: join(dir, "old") });
    const other = await openDb({ dataDir: join(dir, "other") });
    try {
      assert.deepEqual(await initializeObs(db), [6, 7]);
      await initializeObs(other);
      const salt = (d: TraceDb) =>
        d.client.execute({
          sql: "SELECT value FROM obs_state WHERE key = ?",
          args: [TOMBSTONE_SALT_KEY],
        }).then((r) => String(r.rows[0]!.value));
      assert.match(await salt(db), /^[0-9a-f]{64}$/);
      assert.notEqual(await salt(db), await salt(other));
      assert.equal(await tombstones(db), 0);
      await ingestEvents(db, [event("new-1", { user_id: "u" })]);
      await eraseEventIds(db, ["new-1"]);
      const resent = await ingestEvents(db, [event("new-1", { user_id: "u" })]);
      assert.equal(resent.duplicates, 1);
      assert.equal(await tombstones(db), 1);
    } finally {
      db.close();
      other.close();
    }
  });
});

Deno.test("health counts erased event ids as erasures write them, and an index upgraded from version 6 counts those it holds", async () => {
  await withTempDir(async (dir) => {
    const old = await openDb({ dataDir: dir });
    try {
      await migrate(old, ALL_MIGRATIONS);
      await seed(old);
      await eraseEventIds(old, ["a1", "b1"]);
      assert.equal(await tombstones(old), 2);
      // Back to version 6, with its tombstones and without their count.
      await old.client.batch([...UNDO_VERSION_7], "write");
      // An index awaiting its upgrade: health counts the tombstones one by one.
      assert.equal(
        (await obsHealth(old, { latencySamples: 1 })).counts!.erased_events,
        2,
      );
    } finally {
      old.close();
    }
    const db = await openDb({ dataDir: dir });
    try {
      assert.deepEqual(await initializeObs(db), [7]);
      const erased = async () =>
        (await obsHealth(db, { latencySamples: 1 })).counts!.erased_events;
      assert.equal(await erased(), 2);
      await eraseNow(
        db,
        parseErasureSubject({ application_id: "app", user_id: "alice" }),
        { key: TEST_KEY },
      );
      assert.equal(await erased(), await tombstones(db));
      assert.ok(await erased() > 2);
    } finally {
      db.close();
    }
  });
});
