/** Shared set-up for commands that touch the data directory and database. */

import { dirname, resolve } from "node:path";
import {
  refuseFileAsDir,
  resolveDataDir,
  resolveDbUrl,
} from "../lib/data_dir.ts";
import {
  checkpointWal,
  localDbPath,
  migrate,
  NoDataError,
  openDb,
  type TraceDb,
} from "../lib/db.ts";
import { errorMessage, StorageError } from "../lib/errors.ts";
import { fileProblem } from "../lib/file_errors.ts";
import { sqliteAdvice } from "../lib/sqlite_errors.ts";
import { requireExistingLedger } from "../lib/ledger/schema.ts";
import { ALL_MIGRATIONS } from "../lib/migrations.ts";
// The module itself, not maint's mod.ts: every command loads this file.
import {
  lastUnreachedSeq,
  settleUnreached,
} from "../lib/obs/maint/erasure_reach.ts";
import type { CliIo } from "./_io.ts";
import type { OwnState } from "./_outputs.ts";
import { jsonError, printJson } from "./_json.ts";

export { jsonError, printJson };

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
  /**
   * The command acts on evidence already in the ledger (save, replay,
   * cleanup, retire): the database must exist and hold a ledger before
   * anything is created or migrated.
   */
  existingLedger?: boolean;
  /**
   * Create the data directory's erasure key when it has none (default: with
   * `write`, whose migrations provision the observability index), so that
   * the first erasure dry run finds it. Never while receipts need a lost one;
   * an erasure that must use the key its dry run read passes false.
   */
  erasureKey?: boolean;
  /** The command reads the observability index: a missing database says how to begin one. */
  readsIndex?: boolean;
}

/** Where the data is: `--data-dir` / `--db`. */
export type DataFlags = {
  "data-dir"?: string | undefined;
  db?: string | undefined;
};

/**
 * What no output may be written to: the local database file `--data-dir` /
 * `--db` name and its SQLite sidecars (none for a remote database), and the
 * data directory, whose checkpoints and erasure key are Trace's own.
 */
export function ownState(flags: DataFlags, io: CliIo): OwnState {
  // Absolute, so that a refusal names the folder wherever the shell was.
  const dataDir = resolve(
    resolveDataDir({ flag: flags["data-dir"], env: io.env }),
  );
  const path = localDbPath({ dataDir, url: resolveDbUrl(flags.db, io.env) });
  const databaseFiles = path === null
    ? []
    : ["", "-wal", "-shm", "-journal"].map((suffix) =>
      resolve(`${path}${suffix}`)
    );
  return { databaseFiles, dataDir };
}

/** No database where a reader of the index looked: it says how to begin one there. */
export class NoIndexYetError extends NoDataError {
  constructor(path: string) {
    super(path);
    this.message =
      `No Trace data at ${path} yet: nothing has been recorded there; check --data-dir / --db, or begin with trace obs init, trace events ingest FILE or a run`;
    this.name = "NoIndexYetError";
  }
}

/** Opens the data dir and database named by `--data-dir` / `--db`; migrates when `write` is set. */
export async function openDataContext(
  flags: DataFlags,
  io: CliIo,
  options: ContextOptions,
): Promise<DataContext> {
  const dataDir = resolveDataDir({ flag: flags["data-dir"], env: io.env });
  const readOnly = options.readOnly === true && !options.write;
  const url = resolveDbUrl(flags.db, io.env);
  const path = localDbPath({ dataDir, url });
  if (path !== null && resolve(dirname(path)) === resolve(dataDir)) {
    await refuseFileAsDir(dataDir);
  }
  let db: TraceDb;
  try {
    db = await openDb({
      dataDir,
      url,
      authToken: io.env("TRACE_DB_AUTH_TOKEN"),
      create: options.existingLedger ? false : options.create ?? options.write,
      readOnly,
    });
  } catch (error) {
    if (error instanceof NoDataError && options.readsIndex) {
      throw new NoIndexYetError(error.path);
    }
    throw error;
  }
  try {
    if (options.existingLedger) await requireExistingLedger(db);
    if (options.write) {
      await requireWritable(db, dataDir);
      await migrate(db, ALL_MIGRATIONS);
      if (options.erasureKey ?? true) await provisionErasureKey(db, dataDir);
    }
  } catch (error) {
    db.close();
    throw error;
  }
  return { dataDir, db };
}

/**
 * Creates the erasure key of the data directory that holds `db` when it has
 * none and no receipt needs a lost one; returns whether it made one. A key
 * that is lost or unusable is left for the erasure commands and health to
 * report: this command does not need it. A database elsewhere (`--db`) has
 * no data directory of its own here, so nothing is made for it.
 */
export async function provisionErasureKey(
  db: TraceDb,
  dataDir: string,
): Promise<boolean> {
  if (db.path === null || resolve(dirname(db.path)) !== resolve(dataDir)) {
    return false;
  }
  // Loaded here: read-only commands never need the erasure code.
  const { erasureKeyFor, erasureKeyStateFor } = await import(
    "../lib/runs/erasures.ts"
  );
  if (await erasureKeyStateFor(db, dataDir) !== "absent") return false;
  await erasureKeyFor(db, dataDir);
  return true;
}

/**
 * Refuses a writing command where nothing can be written (a read-only data
 * directory, file or medium) before it acts: SQLite opens such a file
 * read-only without a word, and a replay or cleanup would otherwise send
 * requests to the staging adapter and only then fail to record them.
 */
export async function requireWritable(
  db: TraceDb,
  dataDir: string,
): Promise<void> {
  if (db.path !== null) {
    try {
      const tx = await db.client.transaction("write");
      try {
        // Needs write access in any database; rolled back, it leaves nothing.
        await tx.execute("CREATE TABLE trace_write_probe (x)");
      } finally {
        await tx.rollback();
      }
    } catch (error) {
      const advice = sqliteAdvice(error);
      if (advice === null) throw error;
      throw new StorageError(`Cannot write to ${db.path}: ${advice}`, {
        cause: error,
      });
    }
  }
  // The data directory matters here only as the database's own directory
  // (its WAL files, and the checkpoints beside it).
  if (db.path === null || resolve(dirname(db.path)) !== resolve(dataDir)) {
    return;
  }
  let probe: string;
  try {
    probe = await Deno.makeTempFile({ dir: dataDir, prefix: ".write-probe-" });
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return;
    throw new StorageError(
      `Cannot write to the data directory ${dataDir}: ${
        fileProblem(error, "write")
      }; run writing commands where the data directory is writable`,
      { cause: error },
    );
  }
  await Deno.remove(probe).catch(() => {});
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
    // Erasures waiting for a checkpoint reach the file with this one too.
    const waiting = db.readOnly ? null : await lastUnreachedSeq(db);
    const { complete } = await checkpointWal(db);
    if (complete && waiting !== null) await settleUnreached(db, waiting);
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
 * Runs `fn`; with `--json`, an error also goes to stdout as one JSON object,
 * `{"error":{"code","message"}}`. `main()` in `cli.ts` already does this
 * for every command that fails before writing to stdout, so a command run
 * through it needs no wrapper; this remains for commands called directly.
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
