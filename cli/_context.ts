/** Shared set-up for commands that touch the data directory and database. */

import { resolveDataDir } from "../lib/data_dir.ts";
import { checkpointWal, migrate, openDb, type TraceDb } from "../lib/db.ts";
import { errorMessage, TraceError } from "../lib/errors.ts";
import { ALL_MIGRATIONS } from "../lib/migrations.ts";
import type { CliIo } from "./_io.ts";

/** The data directory and an open database. */
export interface DataContext {
  dataDir: string;
  db: TraceDb;
}

/**
 * `write` migrates every component and checkpoints the WAL at the end;
 * `create` (default: `write`) only makes a missing database file;
 * `readOnly` opens the file read-only (readers of the ledger), which also
 * works on read-only media.
 */
export interface ContextOptions {
  write: boolean;
  create?: boolean;
  readOnly?: boolean;
  /** Checkpoint the WAL on close although `write` (migrations) is off: the command writes rows. */
  checkpoint?: boolean;
}

/** Where the data is: `--data-dir` / `--db`. */
export type DataFlags = {
  "data-dir"?: string | undefined;
  db?: string | undefined;
};

/** Opens the data dir and database named by `--data-dir` / `--db`; migrates when `write` is set. */
export async function openDataContext(
  flags: DataFlags,
  io: CliIo,
  options: ContextOptions,
): Promise<DataContext> {
  const dataDir = resolveDataDir({ flag: flags["data-dir"], env: io.env });
  const readOnly = options.readOnly === true && !options.write;
  const db = await openDb({
    dataDir,
    url: flags.db ?? io.env("TRACE_DB_URL"),
    authToken: io.env("TRACE_DB_AUTH_TOKEN"),
    create: options.create ?? options.write,
    readOnly,
  });
  if (options.write) {
    try {
      await migrate(db, ALL_MIGRATIONS);
    } catch (error) {
      db.close();
      throw error;
    }
  }
  return { dataDir, db };
}

/**
 * Runs `fn` with an open data context, always closing the database. A
 * writing command checkpoints the WAL first, so that `trace.db` alone holds
 * everything once it exits.
 */
export async function withDataContext<T>(
  flags: DataFlags,
  io: CliIo,
  options: ContextOptions,
  fn: (context: DataContext) => Promise<T>,
): Promise<T> {
  const context = await openDataContext(flags, io, options);
  try {
    return await fn(context);
  } finally {
    if (options.write || options.checkpoint) {
      await closeWriting(context.db, io);
    } else context.db.close();
  }
}

/**
 * Closes a database a command wrote to, after checkpointing its WAL so that
 * `trace.db` alone holds everything; a failed checkpoint only warns.
 */
export async function closeWriting(db: TraceDb, io: CliIo): Promise<void> {
  try {
    await checkpoint(db, io);
  } finally {
    db.close();
  }
}

async function checkpoint(db: TraceDb, io: CliIo): Promise<void> {
  try {
    const { complete } = await checkpointWal(db);
    if (!complete) {
      io.err(
        "warning: another process is using the database, so part of its WAL stays beside trace.db for now; back up with trace ledger backup FILE\n",
      );
    }
  } catch (error) {
    io.err(
      `warning: Cannot checkpoint the database WAL: ${errorMessage(error)}\n`,
    );
  }
}

/**
 * Like {@link withDataContext}; with `--json`, an error also goes to stdout
 * as one JSON object, `{"error":{"code","message"}}`, so a script that reads
 * stdout always gets JSON. `fn` must not print before it can still throw.
 */
export async function withJsonErrors<T>(
  flags: DataFlags & { json?: boolean | undefined },
  io: CliIo,
  fn: () => Promise<T>,
): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (flags.json) printJson(io, { error: jsonError(error) });
    throw error;
  }
}

/** The JSON form of an error: its stable code and its one-line message. */
export function jsonError(error: unknown): { code: string; message: string } {
  return {
    code: error instanceof TraceError ? error.code : "internal",
    message: errorMessage(error),
  };
}

/** Writes `value` as one line of JSON on stdout. */
export function printJson(io: CliIo, value: unknown): void {
  io.out(JSON.stringify(value) + "\n");
}
