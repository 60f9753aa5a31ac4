/**
 * SQLite's failures in words a user can act on. The engine's own messages
 * (`SQLITE_READONLY: attempt to write a readonly database`) name a result
 * code, not what to do; every command that meets one at its boundary says
 * instead what is wrong with the database and what to try. Both database
 * layers (the libSQL client and the engine connection) put the code at the
 * start of the message, so it is read from there.
 *
 * @module
 */

import { StorageError, TraceError } from "./errors.ts";

const ADVICE: Record<string, string> = {
  SQLITE_READONLY:
    "the database cannot be written here (file or directory permissions, or read-only media); run writing commands where the data directory is writable",
  SQLITE_NOTADB:
    "the file is not a SQLite database; point --data-dir or --db at Trace's database",
  SQLITE_CORRUPT:
    "the database file is damaged; restore it from a copy (trace ledger backup writes one)",
  SQLITE_FULL: "the disk is full; free space and run the command again",
  SQLITE_CANTOPEN:
    "SQLite cannot open the file or create its WAL files beside it (a read-only directory or medium, or missing permissions); check the path and its permissions",
  SQLITE_BUSY:
    "another process held the database's write lock for longer than the wait allows; try again once it has finished writing",
};

/** What to do about a SQLite failure `error` carries, or `null` for any other error. */
export function sqliteAdvice(error: unknown): string | null {
  const message = error instanceof Error ? error.message : String(error);
  const code = /^(SQLITE_[A-Z]+)/.exec(message)?.[1];
  return code ? ADVICE[code] ?? null : null;
}

/**
 * `error` as a {@link StorageError} that says what to do, when it is a
 * SQLite failure with known advice and not already one of Trace's errors;
 * otherwise `error` itself.
 */
export function explainSqlite(error: unknown): unknown {
  if (error instanceof TraceError) return error;
  const advice = sqliteAdvice(error);
  return advice
    ? new StorageError(`Cannot use the database: ${advice}`, { cause: error })
    : error;
}
