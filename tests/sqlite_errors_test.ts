import assert from "node:assert/strict";
import { ConfigError, StorageError } from "../lib/errors.ts";
import { explainSqlite, sqliteAdvice } from "../lib/sqlite_errors.ts";

Deno.test("explainSqlite() turns a known SQLite failure into a storage error that says what to do", () => {
  const readOnly = new Error(
    "SQLITE_READONLY: attempt to write a readonly database",
  );
  const explained = explainSqlite(readOnly);
  assert.ok(explained instanceof StorageError);
  assert.equal(explained.code, "storage");
  assert.equal(
    explained.message,
    "Cannot use the database: the database cannot be written here (file or directory permissions, or read-only media); run writing commands where the data directory is writable",
  );
  assert.equal(explained.cause, readOnly);
  assert.match(
    sqliteAdvice(
      new Error("SQLITE_CORRUPT: database disk image is malformed"),
    )!,
    /damaged; restore it from a copy/,
  );
});

Deno.test("explainSqlite() leaves Trace's own errors and unknown failures as they are", () => {
  const own = new ConfigError("SQLITE_READONLY in a message of ours");
  assert.equal(explainSqlite(own), own);
  const other = new Error("SQLITE_MISMATCH: datatype mismatch");
  assert.equal(explainSqlite(other), other);
  assert.equal(explainSqlite("not an error"), "not an error");
});
