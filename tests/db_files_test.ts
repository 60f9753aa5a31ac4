/**
 * The database file as an operator handles it: a copy of `trace.db` alone
 * after writing commands, `ledger backup`, read-only media, file modes and
 * symbolic links.
 */

import assert from "node:assert/strict";
import { createClient } from "@libsql/client";
import { main } from "../cli.ts";
import { requireWritable } from "../cli/_context.ts";
import {
  backupDb,
  BackupInterruptedError,
  dataFlagsOfDb,
  openDb,
} from "../lib/db.ts";
import { captureIo, withTempDir } from "./_helpers.ts";
import { isInside } from "../lib/state_files.ts";

const IS_POSIX = Deno.build.os !== "windows";

async function trace(args: string[]) {
  const io = captureIo();
  const code = await main(args, io);
  return { code, out: io.stdout(), err: io.stderr() };
}

async function writeConfig(dir: string): Promise<string> {
  const path = `${dir}/staging.json`;
  await Deno.writeTextFile(
    path,
    JSON.stringify({
      base_url: "http://127.0.0.1:1",
      environment: "staging",
      allow_synthetic_writes: true,
    }),
  );
  return path;
}

/** A data directory with three registered targets, written by three commands. */
async function seed(dir: string): Promise<string> {
  const data = `${dir}/data`;
  const config = await writeConfig(dir);
  for (const target of ["a", "b", "c"]) {
    const result = await trace([
      "external-register",
      "--target",
      target,
      "--config",
      config,
      "--data-dir",
      data,
    ]);
    assert.equal(result.code, 0, result.err);
  }
  return data;
}

async function files(dir: string): Promise<string[]> {
  const names: string[] = [];
  for await (const entry of Deno.readDir(dir)) names.push(entry.name);
  return names.sort();
}

/** Runs `trace ledger backup FILE --data-dir DATA`. */
function backupTo(file: string, data: string) {
  return trace(["ledger", "backup", file, "--data-dir", data]);
}

async function sha256(path: string): Promise<string> {
  const bytes = await Deno.readFile(path);
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16)).join("");
}

Deno.test("after writing commands, a copy of trace.db alone holds the whole ledger", async () => {
  await withTempDir(async (dir) => {
    const data = await seed(dir);
    await Deno.mkdir(`${dir}/copy`);
    await Deno.copyFile(`${data}/trace.db`, `${dir}/copy/trace.db`);
    const verify = await trace([
      "ledger",
      "verify",
      "--json",
      "--data-dir",
      `${dir}/copy`,
    ]);
    assert.equal(verify.code, 0, verify.err);
    const result = JSON.parse(verify.out);
    assert.equal(result.entries, 3);
    assert.equal(result.targets, 3);
  });
});

Deno.test("trace ledger backup writes a consistent, verified, owner-only copy and refuses an existing file", async () => {
  await withTempDir(async (dir) => {
    const data = await seed(dir);
    const backup = `${dir}/backup.db`;
    const written = await backupTo(backup, data);
    assert.equal(written.code, 0, written.err);
    assert.match(
      written.out,
      /written to .*backup\.db: ledger intact: 3 entries/,
    );
    if (IS_POSIX) assert.equal((await Deno.stat(backup)).mode! & 0o777, 0o600);
    await Deno.mkdir(`${dir}/restored`);
    await Deno.copyFile(backup, `${dir}/restored/trace.db`);
    const verify = await trace([
      "ledger",
      "verify",
      "--json",
      "--data-dir",
      `${dir}/restored`,
    ]);
    assert.equal(JSON.parse(verify.out).entries, 3);
    const before = await sha256(backup);
    const again = await backupTo(backup, data);
    assert.equal(again.code, 2);
    assert.equal(
      again.err,
      `trace ledger backup: Cannot back up to ${backup}: the file already exists; choose a new path\n`,
    );
    assert.equal(await sha256(backup), before);
    // A directory is named as one, with a file in it to give instead.
    const folder = await backupTo(`${dir}/restored`, data);
    assert.equal(folder.code, 2);
    assert.equal(
      folder.err,
      `trace ledger backup: Cannot back up to ${dir}/restored: it is a directory; name a new file in it, such as ${dir}/restored/trace-backup.db\n`,
    );
  });
});

Deno.test("trace ledger backup refuses a FILE where Trace reads its own state", async () => {
  await withTempDir(async (dir) => {
    const data = await seed(dir);
    await Deno.mkdir(`${data}/external`);
    await Deno.symlink(`${data}/external`, `${dir}/link`);
    for (
      const file of [`${data}/external/copy.json`, `${dir}/link/copy.json`]
    ) {
      const refused = await backupTo(file, data);
      assert.equal(refused.code, 2, refused.err);
      assert.equal(
        refused.err,
        `trace ledger backup: Cannot write a backup to ${file}: ${data}/external holds run checkpoints, which Trace reads as its own (the gate would take the file for a broken checkpoint); write it outside the data directory's external/ folder\n`,
      );
    }
    assert.deepEqual(await files(`${data}/external`), []);
    // The run that seeded the data directory made its erasure key: it stays as it was.
    const before = await Deno.readTextFile(`${data}/erasure.key`);
    const key = await backupTo(`${data}/erasure.key`, data);
    assert.equal(key.code, 2, key.err);
    assert.match(key.err, /it is the data directory's erasure key/);
    assert.equal(await Deno.readTextFile(`${data}/erasure.key`), before);
  });
});

Deno.test("trace ledger backup warns when the copy it verified lacks the ledger's guards", async () => {
  await withTempDir(async (dir) => {
    const data = await seed(dir);
    const raw = createClient({ url: `file:${data}/trace.db` });
    try {
      await raw.execute("DROP TRIGGER ledger_entries_no_delete");
    } finally {
      raw.close();
    }
    const backup = `${dir}/backup.db`;
    const written = await backupTo(backup, data);
    assert.equal(written.code, 0, written.err);
    assert.equal(
      written.err,
      `trace ledger backup: warning: the ledger's guards ledger_entries_no_delete are missing or changed in the copy ${backup} (dropped with an outside tool): its tables no longer refuse UPDATE or DELETE; restore them with trace ledger verify --restore-guards and back up again, and check who changed the database\n`,
    );
  });
});

Deno.test("trace ledger backup stopped by Ctrl-C leaves no copy behind and says so", async () => {
  await withTempDir(async (dir) => {
    const data = await seed(dir);
    const backup = `${dir}/backup.db`;
    const controller = new AbortController();
    controller.abort();
    const io = { ...captureIo(), interrupted: controller.signal };
    const code = await main(
      ["ledger", "backup", backup, "--data-dir", data],
      io,
    );
    assert.equal(code, 2);
    assert.equal(
      io.stderr(),
      `trace ledger backup: Interrupted: the backup to ${backup} was stopped and its partial copy removed; run trace ledger backup again\n`,
    );
    await assert.rejects(Deno.stat(backup), Deno.errors.NotFound);
  });
});

Deno.test("backupDb() removes the copy when its signal aborts while SQLite writes it", async () => {
  await withTempDir(async (dir) => {
    const data = await seed(dir);
    const backup = `${dir}/backup.db`;
    const db = await openDb({ dataDir: data, readOnly: true });
    try {
      const controller = new AbortController();
      // The signal comes while VACUUM INTO runs: the copy is on disk by then.
      const client = {
        execute: async (statement: { sql: string; args: string[] }) => {
          const result = await db.client.execute(statement);
          assert.ok((await Deno.stat(backup)).size > 0);
          controller.abort();
          return result;
        },
      } as unknown as typeof db.client;
      await assert.rejects(
        backupDb({ ...db, client }, backup, { signal: controller.signal }),
        BackupInterruptedError,
      );
      await assert.rejects(Deno.stat(backup), Deno.errors.NotFound);
    } finally {
      db.close();
    }
  });
});

Deno.test("trace ledger backup refuses a path where SQLite keeps a database's journal or log, which SQLite would later discard", async () => {
  await withTempDir(async (dir) => {
    const data = await seed(dir);
    const first = await backupTo(`${dir}/first.db`, data);
    assert.equal(first.code, 0, first.err);
    for (
      const path of [
        `${data}/trace.db-journal`,
        `${dir}/first.db-wal`,
        `${dir}/first.db-journal`,
      ]
    ) {
      const result = await backupTo(path, data);
      assert.equal(result.code, 2, `${path}: ${result.out}`);
      assert.match(
        result.err,
        new RegExp(
          `^trace ledger backup: Cannot back up to ${path}: SQLite would take a file there for the .* of a SQLite database and discard it; choose another path\\n$`,
        ),
      );
      await assert.rejects(Deno.lstat(path), Deno.errors.NotFound);
    }
    const verify = await trace(["ledger", "verify", "--data-dir", data]);
    assert.equal(verify.code, 0, verify.err);
  });
});

Deno.test("trace ledger backup refuses an empty FILE in words, before opening the database", async () => {
  await withTempDir(async (dir) => {
    const result = await backupTo("", `${dir}/none`);
    assert.equal(result.code, 2);
    assert.equal(
      result.err,
      "trace ledger backup: Cannot write a backup to an empty path: name a file; see trace ledger backup --help\n",
    );
  });
});

Deno.test("trace ledger backup writes a FILE named like a file: URL to that very name, owner-only, not where SQLite would read the URL", async () => {
  await withTempDir(async (dir) => {
    const data = await seed(dir);
    // A relative name, as typed in a shell: the command runs in `dir`.
    const output = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        new URL("../cli.ts", import.meta.url).pathname,
        "ledger",
        "backup",
        "file:copy.db",
        "--data-dir",
        data,
      ],
      cwd: dir,
      stdin: "null",
    }).output();
    const err = new TextDecoder().decode(output.stderr);
    assert.equal(output.code, 0, err);
    assert.match(
      new TextDecoder().decode(output.stdout),
      /written to file:copy\.db: ledger intact: 3 entries/,
    );
    await assert.rejects(Deno.lstat(`${dir}/copy.db`), Deno.errors.NotFound);
    const copy = await Deno.stat(`${dir}/file:copy.db`);
    assert.ok(copy.size > 0);
    if (IS_POSIX) assert.equal(copy.mode! & 0o777, 0o600);
  });
});

Deno.test("another application's SQLite file is refused by every command, and left as it was", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/trace.db`;
    const raw = createClient({ url: `file:${path}` });
    await raw.execute(
      "CREATE TABLE users (id INTEGER PRIMARY KEY, email TEXT)",
    );
    await raw.execute("INSERT INTO users (email) VALUES ('a@example.com')");
    raw.close();
    const before = await sha256(path);
    for (
      const args of [
        ["external-runs"],
        ["events", "query"],
        ["obs", "init"],
        ["obs", "propagation", "--application", "app", "--on"],
        ["ledger", "verify"],
        ["obs", "health"],
      ]
    ) {
      const result = await trace([...args, "--data-dir", dir]);
      assert.equal(result.code, 2, args.join(" "));
      assert.match(
        result.err,
        /it holds another application's tables \("users"\) and none of Trace's; point --data-dir or --db at Trace's own database\n$/,
        args.join(" "),
      );
    }
    assert.equal(await sha256(path), before, "the file was written to");
  });
});

Deno.test("requireWritable() refuses a database that cannot be written, before a command acts", async () => {
  await withTempDir(async (dir) => {
    const db = await openDb({ dataDir: dir });
    try {
      await requireWritable(db, dir);
      // As SQLite leaves a file on read-only media: reads work, writes do not.
      await db.client.execute("PRAGMA query_only = ON");
      await assert.rejects(
        () => requireWritable(db, dir),
        /^StorageError: Cannot write to .*trace\.db: the database cannot be written here \(file or directory permissions, or read-only media\)/,
      );
      await db.client.execute("PRAGMA query_only = OFF");
      // A data directory other than the database's own is not the command's to write.
      const file = `${dir}/not-a-dir`;
      await Deno.writeTextFile(file, "");
      await requireWritable(db, file);
      assert.deepEqual(
        (await db.client.execute(
          "SELECT name FROM sqlite_master WHERE name = 'trace_write_probe'",
        )).rows,
        [],
      );
    } finally {
      db.close();
    }
  });
});

Deno.test("read commands leave a database they read as it was: no write pragma", async () => {
  await withTempDir(async (dir) => {
    const data = await seed(dir);
    // A copy in rollback-journal mode, as another tool may leave it.
    await Deno.mkdir(`${dir}/copy`);
    const copy = `${dir}/copy/trace.db`;
    await Deno.copyFile(`${data}/trace.db`, copy);
    const raw = createClient({ url: `file:${copy}` });
    await raw.execute("PRAGMA journal_mode = DELETE");
    raw.close();
    const before = await sha256(copy);
    for (
      const args of [
        ["ledger", "verify"],
        ["ledger", "head"],
        ["external-targets"],
        ["external-gate"],
        ["external-regressions"],
        ["external-runs"],
        ["obs", "health"],
        ["events", "query"],
      ]
    ) {
      const result = await trace([...args, "--data-dir", `${dir}/copy`]);
      assert.doesNotMatch(
        result.err,
        /READONLY|Cannot open database/,
        args.join(" "),
      );
    }
    assert.equal(await sha256(copy), before, "the file was written to");
    assert.deepEqual(await files(`${dir}/copy`), ["trace.db"]);
  });
});

Deno.test({
  name:
    "read commands work on read-only media: a read-only copy where SQLite cannot create its WAL files",
  ignore: !IS_POSIX,
  fn: async () => {
    await withTempDir(async (dir) => {
      const data = await seed(dir);
      const media = `${dir}/media`;
      await Deno.mkdir(media);
      await Deno.copyFile(`${data}/trace.db`, `${media}/trace.db`);
      // Read-only media: the file 0444, the directory 0555. Root ignores
      // modes, so the WAL path is also taken by something SQLite cannot open
      // as a file: for every user, the WAL cannot be created.
      await Deno.mkdir(`${media}/trace.db-wal`);
      await Deno.chmod(`${media}/trace.db`, 0o444);
      await Deno.chmod(media, 0o555);
      try {
        const verify = await trace([
          "ledger",
          "verify",
          "--json",
          "--data-dir",
          media,
        ]);
        assert.equal(verify.code, 0, verify.err);
        assert.equal(JSON.parse(verify.out).entries, 3);
        const targets = await trace([
          "external-targets",
          "--json",
          "--data-dir",
          media,
        ]);
        assert.equal(targets.code, 0, targets.err);
        assert.equal(JSON.parse(targets.out).targets.length, 3);
        const health = await trace(["obs", "health", "--data-dir", media]);
        assert.doesNotMatch(health.err, /READONLY|Cannot open database/);
        const query = await trace(["events", "query", "--data-dir", media]);
        assert.doesNotMatch(query.err, /READONLY|Cannot open database/);
      } finally {
        await Deno.chmod(media, 0o755);
      }
      assert.deepEqual(await files(media), ["trace.db", "trace.db-wal"]);
    });
  },
});

Deno.test({
  name:
    "a writing command makes an existing 0666 trace.db and its WAL files owner-only",
  ignore: !IS_POSIX,
  fn: async () => {
    await withTempDir(async (dir) => {
      const data = await seed(dir);
      const db = `${data}/trace.db`;
      const raw = createClient({ url: `file:${db}` });
      await raw.execute("SELECT count(*) FROM ledger_entries");
      for (const path of [db, `${db}-wal`, `${db}-shm`]) {
        if (await Deno.stat(path).then(() => true, () => false)) {
          await Deno.chmod(path, 0o666);
        }
      }
      const result = await trace([
        "external-register",
        "--target",
        "d",
        "--config",
        await writeConfig(dir),
        "--data-dir",
        data,
      ]);
      raw.close();
      assert.equal(result.code, 0, result.err);
      for (const path of [db, `${db}-wal`, `${db}-shm`]) {
        const stat = await Deno.stat(path).catch(() => null);
        if (stat) assert.equal(stat.mode! & 0o777, 0o600, path);
      }
    });
  },
});

Deno.test({
  name:
    "a symbolic link where trace.db should be is refused with one line, dangling or not",
  ignore: !IS_POSIX,
  fn: async () => {
    await withTempDir(async (dir) => {
      const config = await writeConfig(dir);
      await Deno.mkdir(`${dir}/data`);
      await Deno.mkdir(`${dir}/elsewhere`);
      await Deno.symlink(`${dir}/elsewhere/trace.db`, `${dir}/data/trace.db`);
      const dangling = await trace([
        "external-register",
        "--target",
        "a",
        "--config",
        config,
        "--data-dir",
        `${dir}/data`,
      ]);
      assert.equal(dangling.code, 2);
      assert.equal(
        dangling.err,
        `trace external-register: Cannot open database file ${dir}/data/trace.db: it is a symbolic link; point --data-dir or --db at the real file\n`,
      );
      assert.deepEqual(await files(`${dir}/elsewhere`), []);
      await Deno.writeTextFile(`${dir}/elsewhere/trace.db`, "");
      for (
        const args of [
          ["external-register", "--target", "a", "--config", config],
          ["ledger", "verify"],
        ]
      ) {
        const result = await trace([...args, "--data-dir", `${dir}/data`]);
        assert.equal(result.code, 2);
        assert.match(result.err, /: it is a symbolic link; point --data-dir/);
      }
      assert.equal((await Deno.stat(`${dir}/elsewhere/trace.db`)).size, 0);
    });
  },
});

Deno.test("index maintenance that writes leaves its rows in trace.db itself", async () => {
  await withTempDir(async (dir) => {
    const data = `${dir}/data`;
    const events = `${dir}/events.ndjson`;
    await Deno.writeTextFile(
      events,
      JSON.stringify({
        application_id: "app-1",
        agent_id: "agent-1",
        event_id: "e-1",
        kind: "retrieval",
      }) + "\n",
    );
    assert.equal(
      (await trace(["events", "ingest", events, "--data-dir", data])).code,
      0,
    );
    const parity = await trace(["obs", "parity", "--data-dir", data]);
    assert.equal(parity.code, 0, parity.err);
    // parity records its result: once it exits, a copy of trace.db alone shows it.
    await Deno.mkdir(`${dir}/copy`);
    await Deno.copyFile(`${data}/trace.db`, `${dir}/copy/trace.db`);
    const health = await trace([
      "obs",
      "health",
      "--json",
      "--data-dir",
      `${dir}/copy`,
    ]);
    const report = JSON.parse(health.out);
    assert.notEqual(report.parity.status, "unknown", health.out);
    assert.equal(report.counts.events, 1);
  });
});

Deno.test({
  name:
    "a data directory named with %, ? or # holds its database itself, for writers and readers",
  ignore: !IS_POSIX,
  fn: async () => {
    await withTempDir(async (dir) => {
      const events = `${dir}/events.ndjson`;
      await Deno.writeTextFile(
        events,
        '{"event_id":"e1","application_id":"app-1","agent_id":"a1","kind":"retrieval"}\n',
      );
      for (const name of ["d%41ta", "a%20b", "q?x#y"]) {
        const data = `${dir}/${name}`;
        // libSQL percent-decodes a file: URL: unencoded, these opened dAta, "a b" or "q".
        const ingest = await trace([
          "events",
          "ingest",
          "--data-dir",
          data,
          events,
        ]);
        assert.equal(ingest.code, 0, ingest.err);
        assert.ok((await files(data)).includes("trace.db"), name);
        const query = await trace([
          "events",
          "query",
          "--json",
          "--data-dir",
          data,
        ]);
        assert.equal(query.code, 0, query.err);
        assert.deepEqual(
          JSON.parse(query.out).events.map((e: { event_id: string }) =>
            e.event_id
          ),
          ["e1"],
        );
      }
      assert.deepEqual(
        (await files(dir)).filter((n) => n !== "events.ndjson"),
        ["a%20b", "d%41ta", "q?x#y"],
      );
    });
  },
});

Deno.test("isInside() takes a name starting with two dots as inside, and only a .. segment as leading out", async () => {
  await withTempDir(async (dir) => {
    await Deno.mkdir(`${dir}/external`);
    assert.equal(
      await isInside(`${dir}/external/..copy.json`, `${dir}/external`),
      true,
    );
    assert.equal(
      await isInside(`${dir}/external/x/../y.json`, `${dir}/external`),
      true,
    );
    assert.equal(
      await isInside(`${dir}/external/../y.json`, `${dir}/external`),
      false,
    );
    assert.equal(
      await isInside(`${dir}/externals/y.json`, `${dir}/external`),
      false,
    );
  });
});

Deno.test("dataFlagsOfDb() prints absolute flags that reach the same data from any directory", () => {
  const cwd = Deno.cwd();
  assert.equal(
    dataFlagsOfDb({ path: "data/trace.db", url: "file:data/trace.db" }),
    ` --data-dir ${cwd}/data`,
  );
  // A directory named like a flag stays a value once absolute.
  assert.equal(
    dataFlagsOfDb({ path: "-odd/trace.db", url: "file:-odd/trace.db" }),
    ` --data-dir ${cwd}/-odd`,
  );
  // A database file outside the data directory: both, so checkpoints are found too.
  assert.equal(
    dataFlagsOfDb({ path: "/x/y.db", url: "file:/x/y.db" }, "/d"),
    " --data-dir /d --db file:/x/y.db",
  );
  assert.equal(
    dataFlagsOfDb({ path: "/d/trace.db", url: "file:/d/trace.db" }, "/d"),
    " --data-dir /d",
  );
  assert.equal(
    dataFlagsOfDb({
      path: null,
      url: "libsql://user:pw@db.example.com/x?authToken=secret",
    }),
    " --db libsql://db.example.com/x",
  );
  assert.equal(
    dataFlagsOfDb({ path: "/my data/trace.db", url: "file:/my data/trace.db" }),
    " --data-dir '/my data'",
  );
});
