import assert from "node:assert/strict";
import { createClient } from "@libsql/client";
import { withDb, withTempDir } from "./_helpers.ts";
import { openDb, type TraceDb } from "../lib/db.ts";
import { ingestEvents } from "../lib/obs/ingest/mod.ts";
import { initializeObs } from "../lib/obs/mod.ts";
import { retention } from "../lib/obs/maint/mod.ts";

const DAY = 86_400_000;
const NOW = Date.parse("2026-09-30T00:00:00Z");

/** 600 events 40 days old with 4,000-character previews: about 3 MB to free. */
async function seedOld(db: TraceDb): Promise<void> {
  await initializeObs(db);
  const text = "x".repeat(4_000);
  const events = Array.from({ length: 600 }, (_, i) => ({
    event_id: `old${i}`,
    application_id: "app-1",
    agent_id: "agent-1",
    kind: "retrieval",
    started_at: new Date(NOW - 40 * DAY).toISOString(),
    preview: text,
  }));
  await ingestEvents(db, events, { now: () => NOW });
}

async function pragma(db: TraceDb, name: string): Promise<number> {
  const result = await db.client.execute(`PRAGMA ${name}`);
  return Number(Object.values(result.rows[0]!)[0]);
}

/** A database file created in incremental auto-vacuum mode (set before any table). */
async function withIncrementalDb<T>(fn: (db: TraceDb) => Promise<T>) {
  return await withTempDir(async (dir) => {
    const path = `${dir}/trace.db`;
    const raw = createClient({ url: `file:${path}` });
    await raw.execute("PRAGMA auto_vacuum = INCREMENTAL");
    await raw.execute("PRAGMA journal_mode = WAL");
    raw.close();
    const db = await openDb({ url: `file:${path}` });
    try {
      return await fn(db);
    } finally {
      db.close();
    }
  });
}

/** A database made before new files defaulted to incremental auto-vacuum. */
async function withNoneModeDb<T>(fn: (db: TraceDb) => Promise<T>) {
  return await withTempDir(async (dir) => {
    const path = `${dir}/trace.db`;
    const raw = createClient({ url: `file:${path}` });
    await raw.execute("PRAGMA auto_vacuum = NONE");
    await raw.execute("PRAGMA journal_mode = WAL");
    // An older build's first table, which fixes the file's auto-vacuum mode.
    await raw.execute(
      "CREATE TABLE schema_migrations (component TEXT NOT NULL, version INTEGER NOT NULL, name TEXT NOT NULL, applied_at TEXT NOT NULL, PRIMARY KEY (component, version))",
    );
    raw.close();
    const db = await openDb({ url: `file:${path}` });
    try {
      return await fn(db);
    } finally {
      db.close();
    }
  });
}

Deno.test("retention() reclaims incrementally in an auto_vacuum=INCREMENTAL file, without a full VACUUM", async () => {
  await withIncrementalDb(async (db) => {
    await seedOld(db);
    assert.equal(await pragma(db, "auto_vacuum"), 2);
    const result = await retention(db, {
      dryRun: false,
      batchSize: 100,
      now: () => NOW,
    });
    assert.equal(result.events, 600);
    const storage = result.storage!;
    assert.equal(storage.method, "incremental_vacuum");
    assert.equal(storage.auto_vacuum, "incremental");
    assert.ok(storage.incremental_steps >= 1);
    assert.equal(storage.free_bytes_after, 0);
    assert.ok(
      storage.bytes_after < storage.bytes_before,
      `${storage.bytes_after} < ${storage.bytes_before}`,
    );
    assert.equal(
      storage.bytes_reclaimed,
      storage.bytes_before - storage.bytes_after,
    );
    const files = (await Deno.stat(db.path!)).size +
      await Deno.stat(`${db.path}-wal`).then((s) => s.size, () => 0);
    assert.equal(storage.bytes_after, files, "sizes are the files on disk");
  });
});

Deno.test("retention() leaves a file without auto-vacuum alone unless a vacuum is asked for, and says so", async () => {
  await withNoneModeDb(async (db) => {
    await seedOld(db);
    assert.equal(await pragma(db, "auto_vacuum"), 0);
    const result = await retention(db, { dryRun: false, now: () => NOW });
    const storage = result.storage!;
    assert.equal(storage.method, "none");
    assert.equal(storage.auto_vacuum, "none");
    assert.equal(storage.incremental_steps, 0);
    assert.ok(storage.free_bytes_after > 1_000_000, "the freed pages are kept");
    assert.match(storage.note ?? "", /auto-vacuum is off/);
    assert.equal(
      storage.bytes_reclaimed,
      Math.max(0, storage.bytes_before - storage.bytes_after),
    );
    assert.equal(await pragma(db, "auto_vacuum"), 0, "no silent rewrite");
  });
});

Deno.test("retention() with vacuum rewrites once and switches the file to incremental mode", async () => {
  await withNoneModeDb(async (db) => {
    await seedOld(db);
    const first = await retention(db, {
      dryRun: false,
      vacuum: true,
      now: () => NOW,
    });
    assert.equal(first.storage!.method, "vacuum");
    assert.equal(first.storage!.free_bytes_after, 0);
    assert.ok(first.storage!.bytes_reclaimed > 1_000_000);
    assert.equal(await pragma(db, "auto_vacuum"), 2);
    // Later runs reclaim in steps, with no vacuum flag needed.
    await ingestEvents(
      db,
      Array.from({ length: 300 }, (_, i) => ({
        event_id: `again${i}`,
        application_id: "app-1",
        agent_id: "agent-1",
        kind: "retrieval",
        started_at: new Date(NOW - 40 * DAY).toISOString(),
        preview: "y".repeat(4_000),
      })),
      { now: () => NOW },
    );
    const second = await retention(db, { dryRun: false, now: () => NOW });
    assert.equal(second.storage!.method, "incremental_vacuum");
    assert.ok(second.storage!.bytes_reclaimed > 0);
  });
});

Deno.test("openDb() creates new databases in incremental auto-vacuum mode", async () => {
  await withDb(async (db) => {
    await seedOld(db);
    assert.equal(await pragma(db, "auto_vacuum"), 2);
  });
});
