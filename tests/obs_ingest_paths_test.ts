/**
 * Ingest writes a local file through its engine connection (statements
 * prepared once) and every other database through the libSQL client (SQL
 * scripts of literals): both paths store the same rows, value for value and
 * type for type, and the engine connection only ever reaches the client's
 * own file.
 */

import assert from "node:assert/strict";
import { withDb, withTempDir } from "./_helpers.ts";
import {
  engineConnection,
  openDb,
  openMemoryDb,
  type TraceDb,
} from "../lib/db.ts";
import { EngineConnection } from "../lib/_db_engine.ts";
import { ingestEvents } from "../lib/obs/ingest/mod.ts";
import { initializeObs } from "../lib/obs/mod.ts";
import { dumpIndex, INDEX_TABLES, varietyEvents } from "./_index_rows.ts";

async function ingestAll(db: TraceDb): Promise<void> {
  await initializeObs(db);
  const batch = varietyEvents();
  const now = () => Date.UTC(2026, 8, 2);
  await ingestEvents(db, batch.slice(0, 60), { now });
  await ingestEvents(db, batch, { now }); // repeats, then new ids
}

Deno.test("the engine connection and the client store the same rows with the same types", async () => {
  const memory = openMemoryDb();
  try {
    assert.equal(await engineConnection(memory), null);
    await ingestAll(memory);
    await withDb(async (db) => {
      assert.ok(await engineConnection(db), "a local file gets one");
      await ingestAll(db);
      const file = await dumpIndex(db);
      const client = await dumpIndex(memory);
      for (const table of INDEX_TABLES) {
        assert.ok(file[table]!.length > 0 || table === "obs_previews", table);
        assert.deepEqual(file[table], client[table], table);
      }
      assert.ok(file.obs_previews!.length > 0, "previews were written");
    });
  } finally {
    memory.close();
  }
});

Deno.test("an engine connection is refused for a file other than the client's", async () => {
  await withTempDir(async (dir) => {
    const one = await openDb({ dataDir: `${dir}/one` });
    const two = await openDb({ dataDir: `${dir}/two` });
    try {
      assert.equal(await EngineConnection.open(two.path!, one.client), null);
      const same = await EngineConnection.open(one.path!, one.client);
      assert.ok(same);
      same.close();
    } finally {
      one.close();
      two.close();
    }
  });
});

Deno.test("a read-only or closed handle has no engine connection", async () => {
  await withTempDir(async (dir) => {
    const writer = await openDb({ dataDir: dir });
    await initializeObs(writer);
    assert.ok(await engineConnection(writer));
    writer.close();
    assert.equal(await engineConnection(writer), null);
    const reader = await openDb({ dataDir: dir, readOnly: true });
    try {
      assert.equal(await engineConnection(reader), null);
    } finally {
      reader.close();
    }
  });
});
