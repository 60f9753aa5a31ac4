import assert from "node:assert/strict";
import {
  appliedVersions,
  migrate,
  type Migration,
  openDb,
  requireSchema,
} from "../lib/db.ts";
import { ALL_MIGRATIONS } from "../lib/migrations.ts";
import { requireLedger } from "../lib/ledger/schema.ts";
import { requireAuthSchema } from "../lib/auth/schema.ts";
import { StorageError } from "../lib/errors.ts";
import { ingestEvents } from "../lib/obs/ingest/mod.ts";
import { OBS_SCHEMA_VERSION, requireObs } from "../lib/obs/mod.ts";
import { markNewerSchema, withTempDir } from "./_helpers.ts";
import { closedPort } from "./_tcp_servers.ts";

const IS_POSIX = Deno.build.os !== "windows";

Deno.test("openDb() creates a private data directory and database file in WAL mode", async () => {
  await withTempDir(async (dir) => {
    const dataDir = `${dir}/nested/data`;
    const db = await openDb({ dataDir });
    try {
      assert.equal(db.path, `${dataDir}/trace.db`);
      const mode = await db.client.execute("PRAGMA journal_mode");
      assert.equal(String(mode.rows[0]!.journal_mode).toLowerCase(), "wal");
    } finally {
      db.close();
    }
  });
});

Deno.test({
  name:
    "openDb() keeps the data directory 0700 and the database and its WAL files 0600",
  ignore: !IS_POSIX,
  fn: async () => {
    await withTempDir(async (dir) => {
      const dataDir = `${dir}/nested/data`;
      const db = await openDb({ dataDir });
      try {
        await migrate(db, ALL_MIGRATIONS);
        assert.equal((await Deno.stat(dataDir)).mode! & 0o777, 0o700);
        assert.equal((await Deno.stat(db.path!)).mode! & 0o777, 0o600);
        // Both exist while a connection that has written is open.
        for (const sidecar of ["-wal", "-shm"]) {
          const stat = await Deno.stat(db.path + sidecar);
          assert.equal(stat.mode! & 0o777, 0o600, sidecar);
        }
      } finally {
        db.close();
      }
    });
  },
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
        () => requireSchema(db, "ledger", "run a command that writes first", 1),
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

Deno.test("tables a newer build upgraded are refused for writes and reads, and left as they are", async () => {
  await withTempDir(async (dir) => {
    const newer = OBS_SCHEMA_VERSION + 1;
    const db = await openDb({ dataDir: dir });
    try {
      await migrate(db, ALL_MIGRATIONS);
      await markNewerSchema(db, "obs", newer);
    } finally {
      db.close();
    }
    const expected = new RegExp(
      `obs tables in .* are at schema version ${newer}, newer than this build knows \\(${OBS_SCHEMA_VERSION}\\); use the trace build that upgraded them or a newer one$`,
    );
    const again = await openDb({ dataDir: dir });
    try {
      for (
        const attempt of [
          () => migrate(again, ALL_MIGRATIONS),
          () => requireObs(again),
          () =>
            ingestEvents(again, [{
              event_id: "e1",
              application_id: "a",
              kind: "retrieval",
            }]),
        ]
      ) {
        await assert.rejects(attempt, (error: unknown) => {
          assert.ok(error instanceof StorageError);
          assert.match(error.message, expected);
          return true;
        });
      }
      assert.equal((await appliedVersions(again)).get("obs"), newer);
    } finally {
      again.close();
    }
  });
});

Deno.test("ledger and audit readers refuse tables a newer build upgraded", async () => {
  await withTempDir(async (dir) => {
    const db = await openDb({ dataDir: dir });
    try {
      await migrate(db, ALL_MIGRATIONS);
      for (const component of ["ledger", "auth"]) {
        await markNewerSchema(db, component, 99);
      }
      await assert.rejects(
        () => requireLedger(db),
        /ledger tables in .* are at schema version 99, newer than this build knows/,
      );
      await assert.rejects(
        () => requireAuthSchema(db),
        /auth tables in .* are at schema version 99, newer than this build knows/,
      );
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

Deno.test({
  name: "openDb() leaves an existing shared directory's permissions alone",
  ignore: !IS_POSIX,
  fn: async () => {
    await withTempDir(async (dir) => {
      await Deno.chmod(dir, 0o755);
      const db = await openDb({ url: `file:${dir}/shared.db` });
      db.close();
      assert.equal((await Deno.stat(dir)).mode! & 0o777, 0o755);
    });
  },
});

Deno.test("openDb() refuses a data directory that is a file, and an empty file: URL", async () => {
  await withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/afile`, "x");
    await assert.rejects(
      () => openDb({ dataDir: `${dir}/afile` }),
      /Cannot use .*afile as a data directory: it is a file; choose a directory/,
    );
    await assert.rejects(() => openDb({ url: "file:" }), /has no path/);
  });
});

Deno.test("openDb({ create: false }) does not create anything for a reader", async () => {
  await withTempDir(async (dir) => {
    await assert.rejects(
      () => openDb({ dataDir: `${dir}/new`, create: false }),
      /No Trace data at .*new\/trace\.db yet/,
    );
    assert.equal(
      await Deno.stat(`${dir}/new`).then(() => true, () => false),
      false,
    );
  });
});

Deno.test("openDb() refuses credentials in a remote URL and names an unreachable server without secrets", async () => {
  await assert.rejects(
    () => openDb({ url: "libsql://127.0.0.1:9/db?authToken=secret-value" }),
    /no credentials or query in --db; set TRACE_DB_AUTH_TOKEN/,
  );
  const port = closedPort();
  await assert.rejects(
    () =>
      openDb({ url: `http://127.0.0.1:${port}`, authToken: "secret-value" }),
    (error: Error) => {
      assert.match(
        error.message,
        new RegExp(
          `Cannot reach database http://127\\.0\\.0\\.1:${port}: .*TRACE_DB_AUTH_TOKEN`,
        ),
      );
      assert.doesNotMatch(error.message, /secret-value/);
      return true;
    },
  );
});
