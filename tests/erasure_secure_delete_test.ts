import assert from "node:assert/strict";
import { createClient } from "@libsql/client";
import { join } from "node:path";
import { checkpointWal, openDb } from "../lib/db.ts";
import {
  erasureTruncation,
  parseErasureSubject,
  planErasure,
  unreachedErasures,
} from "../lib/obs/maint/mod.ts";
import {
  noteCommit,
  startBackgroundCheckpoints,
} from "../lib/obs/ingest/mod.ts";
import { eraseSubject, planSubjectErasure } from "../lib/runs/mod.ts";
import {
  event,
  fileHolds,
  seed,
  TEST_KEY,
  withErasureDb,
} from "./erasure_support.ts";
import { withTempDir } from "./_helpers.ts";

const USER = "zelda-4f1c9e";
const TEXT = "SECRET_PREVIEW_7d2c1b98e0";

Deno.test("eraseSubject() leaves none of the erased text in the database file or its WAL", async () => {
  await withErasureDb(async (db) => {
    await seed(db);
    await seed(db, [
      event("z1", {
        user_id: USER,
        preview: `${TEXT} first, said in confidence`,
      }),
      event("z2", {
        user_id: USER,
        thread_id: "tz",
        preview: `${TEXT} second`.repeat(200),
      }),
    ]);
    // In the file before: the check below can see the text when it is there.
    assert.equal((await checkpointWal(db)).complete, true);
    assert.equal(await fileHolds(db.path!, TEXT), true);
    assert.equal(await fileHolds(db.path!, USER), true);

    const subject = parseErasureSubject({
      application_id: "app",
      user_id: USER,
    });
    const plan = await planErasure(db, subject, { key: TEST_KEY });
    const { result } = await eraseSubject(db, subject, plan.confirmation, {
      key: TEST_KEY,
    });
    assert.equal(result.reached_file, true);
    assert.equal(result.storage?.method, "incremental_vacuum");
    assert.equal((await Deno.stat(`${db.path}-wal`)).size, 0);
    assert.equal(await fileHolds(db.path!, TEXT), false);
    assert.equal(await fileHolds(db.path!, USER), false);
    // What was not erased is still there.
    assert.equal(await fileHolds(db.path!, "BOB_TEXT"), true);
  });
});

/** A table with one secret row among others, deleted through `deleteVia` while another connection holds a transaction. */
async function deleteWhileAnotherConnectionIsBusy(
  path: string,
  plain: boolean,
): Promise<boolean> {
  const db = await openDb({ url: `file:${path}` });
  const client = plain ? createClient({ url: `file:${path}` }) : db.client;
  try {
    await db.client.execute(
      "CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT)",
    );
    for (let i = 0; i < 40; i++) {
      await db.client.execute({
        sql: "INSERT INTO t (body) VALUES (?)",
        args: [i === 7 ? TEXT : `row ${i} of filler text`],
      });
    }
    await checkpointWal(db);
    assert.equal(await fileHolds(path, TEXT), true);
    // The pool's first connection is busy, so the delete runs on a fresh one.
    const busy = await db.client.transaction("read");
    await client.execute({ sql: "DELETE FROM t WHERE body = ?", args: [TEXT] });
    busy.close();
    assert.equal((await checkpointWal(db)).complete, true);
    return await fileHolds(path, TEXT);
  } finally {
    if (plain) client.close();
    db.close();
  }
}

Deno.test("openDb() zeroes deleted rows on every pooled connection; a plain libSQL client leaves them in the file", async () => {
  await withTempDir(async (dir) => {
    assert.equal(
      await deleteWhileAnotherConnectionIsBusy(join(dir, "secure.db"), false),
      false,
    );
    assert.equal(
      await deleteWhileAnotherConnectionIsBusy(join(dir, "plain.db"), true),
      true,
      "without secure_delete the deleted text stays in the file",
    );
  });
});

Deno.test("a server's background checkpoints truncate while an erasure waits, and settle it once a reader lets them", async () => {
  await withErasureDb(async (db) => {
    await seed(db);
    const subject = parseErasureSubject({
      application_id: "app",
      user_id: "alice",
    });
    const plan = await planSubjectErasure(db, subject, { key: TEST_KEY });
    // Committed, but no checkpoint after it (as when a process ends there).
    const { receipt } = await eraseSubject(db, subject, plan.confirmation, {
      key: TEST_KEY,
      reclaim: false,
    });
    const id = receipt.receipt.receipt_id;
    assert.deepEqual(await unreachedErasures(db), [id]);
    const truncation = erasureTruncation(db);
    // A reader on another connection keeps a snapshot that needs the WAL.
    const reader = await openDb({ url: db.url, readOnly: true });
    const snapshot = await reader.client.transaction("read");
    try {
      await snapshot.execute("SELECT COUNT(*) FROM obs_events");
      const blocked = startBackgroundCheckpoints(db, { truncation });
      await blocked.stop();
      assert.deepEqual(await unreachedErasures(db), [id]);
      assert.equal(await fileHolds(db.path!, "ALICE_PREVIEW_ONE"), true);
    } finally {
      snapshot.close();
      reader.close();
    }
    // The reader is gone: the next checkpoint after a commit truncates.
    const checkpoints = startBackgroundCheckpoints(db, { truncation });
    noteCommit(db);
    await checkpoints.stop();
    assert.deepEqual(await unreachedErasures(db), []);
    assert.equal(await fileHolds(db.path!, "ALICE_PREVIEW_ONE"), false);
  });
});
