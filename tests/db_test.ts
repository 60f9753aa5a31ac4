import assert from "node:assert/strict";
import {
  appliedVersions,
  migrate,
  type Migration,
  openDb,
  requireSchema,
} from "../lib/db.ts";
import { ALL_MIGRATIONS } from "../lib/migrations.ts";
import { withTempDir } from "./_helpers.ts";

const IS_POSIX = Deno.build.os !== "windows";

Deno.test("openDb() creates a private data directory and database file in WAL mode", async () => {
  await withTempDir(async (dir) => {
    const dataDir = `${dir}/nested/data`;
    const db = await openDb({ dataDir });
    try {
      assert.equal(db.path, `${dataDir}/trace.db`);
      const mode = await db.client.execute("PRAGMA journal_mode");
      assert.equal(String(mode.rows[0]!.journal_mode).toLowerCase(), "wal");
      await migrate(db, ALL_MIGRATIONS);
      if (IS_POSIX) {
        assert.equal((await Deno.stat(dataDir)).mode! & 0o777, 0o700);
        assert.equal((await Deno.stat(db.path!)).mode! & 0o777, 0o600);
        for (const sidecar of ["-wal", "-shm"]) {
          const stat: Deno.FileInfo | null = await Deno.stat(db.path + sidecar)
            .catch(() => null);
          if (stat) assert.equal(stat.mode! & 0o777, 0o600, sidecar);
        }
      }
    } finally {
      db.close();
    }
  });
});

Deno.test("openDb() never creates tables: reads report a missing schema with the command to run", async () => {
  await withTempDir(async (dir) => {
    const db = await openDb({ dataDir: dir });
    try {
      assert.deepEqual(await appliedVersions(db), new Map());
      const tables = await db.client.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table'",
      );
      assert.equal(tables.rows.length, 0);
      await assert.rejects(
        () => requireSchema(db, "ledger", "run a command that writes first"),
        /No ledger data in .*trace\.db yet; run a command that writes first/,
      );
    } finally {
      db.close();
    }
  });
});

Deno.test("migrate() applies each version once, in order, and is safe to repeat", async () => {
  const steps: Migration[] = [
    {
      component: "t",
      version: 2,
      name: "add b",
      statements: ["ALTER TABLE t_items ADD COLUMN b TEXT"],
    },
    {
      component: "t",
      version: 1,
      name: "create",
      statements: ["CREATE TABLE t_items (a TEXT)"],
    },
  ];
  await withTempDir(async (dir) => {
    const db = await openDb({ dataDir: dir });
    try {
      assert.deepEqual((await migrate(db, steps)).map((m) => m.version), [
        1,
        2,
      ]);
      assert.deepEqual(await migrate(db, steps), []);
      assert.equal((await appliedVersions(db)).get("t"), 2);
    } finally {
      db.close();
    }
  });
});

Deno.test("migrate() rolls back a failing step and names it", async () => {
  await withTempDir(async (dir) => {
    const db = await openDb({ dataDir: dir });
    try {
      const broken: Migration[] = [{
        component: "t",
        version: 1,
        name: "broken",
        statements: ["CREATE TABLE ok_table (a)", "NOT SQL"],
      }];
      await assert.rejects(
        () => migrate(db, broken),
        /Cannot apply migration t\/1 \(broken\)/,
      );
      const tables = await db.client.execute(
        "SELECT name FROM sqlite_master WHERE name = 'ok_table'",
      );
      assert.equal(tables.rows.length, 0);
    } finally {
      db.close();
    }
  });
});

Deno.test("openDb() refuses unsupported database URLs with the accepted schemes", async () => {
  await assert.rejects(
    () => openDb({ url: "postgres://x/y" }),
    /unsupported scheme "postgres:"; use file:, libsql:/,
  );
  await assert.rejects(
    () => openDb({ url: "not a url" }),
    /not a URL; use file:PATH or libsql:\/\/HOST/,
  );
});
