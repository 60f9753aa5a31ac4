/**
 * One libSQL connection factory and the versioned migrations shared by the
 * ledger and the observability index. Reads never create tables: commands that
 * write call {@link migrate} explicitly; readers call {@link requireSchema}.
 * Readers open the file without creating, chmod-ing or setting anything
 * (read-only media included); writers keep it owner-only, checkpoint the WAL
 * when they finish ({@link checkpointWal}), and {@link backupDb} writes a
 * consistent single-file copy.
 *
 * Every connection a writable local open hands out runs with SQLite's
 * `secure_delete` (`_db_secure_delete.ts`), so deleted rows are zeroed in
 * the file rather than left in free space; readers cannot delete and a
 * remote server applies its own settings.
 *
 * A local client's transactions wait their turn for one of its pooled
 * connections (`_db_transaction_slots.ts`) rather than being refused when
 * many requests read at once; a wait past its bound is a
 * {@link DatabaseBusyError}, which says to retry.
 *
 * @module
 */

import { type Client, createClient, type Transaction } from "@libsql/client";
import { basename, dirname, join, resolve } from "node:path";
import { ConfigError, StorageError } from "./errors.ts";
import { fileProblem } from "./file_errors.ts";
import { openFile, POOL_CONNECTIONS, restrictSidecars } from "./_db_file.ts";
import { SECURE_DELETE_ON, SecureDeleteClient } from "./_db_secure_delete.ts";
import { holdWrites as holdFileWrites } from "./_db_write_gate.ts";
import { EngineConnection } from "./_db_engine.ts";
import {
  RESERVED_CONNECTIONS,
  SlottedClient,
  TransactionSlots,
} from "./_db_transaction_slots.ts";
import { quoteValue } from "./echo.ts";
import { stateFileKind } from "./state_files.ts";
import { shellWord } from "./shell_word.ts";

export type { EngineConnection, EngineValue } from "./_db_engine.ts";

export { NoDataError } from "./_db_file.ts";
export { DatabaseBusyError } from "./_db_transaction_slots.ts";

/** One schema step of one component (`ledger`, `obs`, …). */
export interface Migration {
  /** The component the step belongs to; each has its own version sequence. */
  component: string;
  /** The step's version within its component, from 1. */
  version: number;
  /** What the step does, recorded when it is applied. */
  name: string;
  /** The SQL statements of the step, run in one transaction. */
  statements: string[];
}

/** An open database and where it lives. */
export interface TraceDb {
  /**
   * The libSQL client Trace's own modules run SQL through. Not part of the
   * library surface (its type is libSQL's): use Trace's functions, which
   * verify what they read.
   *
   * @ignore
   */
  client: Client;
  /** The URL the client was opened with (a `file:` URL for local files). */
  url: string;
  /** Local file path, or `null` for a remote libSQL server. */
  path: string | null;
  /** True when opened read-only: nothing can be written through it. */
  readOnly?: boolean;
  /** Closes the connection; the handle is unusable afterwards. */
  close(): void;
}

/**
 * Checks that a library caller passed `db` as a database {@link openDb}
 * opened: a JavaScript caller, or one past a type cast, otherwise meets a
 * runtime's message about a property of `undefined`.
 */
export function assertTraceDb(
  db: unknown,
  caller: string,
): asserts db is TraceDb {
  const client = (db as { client?: { execute?: unknown } } | null)?.client;
  if (typeof client?.execute !== "function") {
    throw new ConfigError(
      `${caller} needs db: a database opened with openDb() (from mod.ts), got ${
        db === null ? "null" : typeof db
      }`,
    );
  }
}

/** Options for {@link openDb}. */
export interface OpenDbOptions {
  /** Data directory holding `trace.db`; used when `url` is absent. */
  dataDir?: string | undefined;
  /** `--db URL`: `file:`, `libsql://`, `http(s)://` or `ws(s)://`. */
  url?: string | undefined;
  /** Auth token for a remote server (defaults to `$TRACE_DB_AUTH_TOKEN`). */
  authToken?: string | undefined;
  /**
   * Create a missing local database file (default true). Writers pass true:
   * the file and its WAL files are made owner-only and the journal pragmas
   * set. Readers pass false: nothing is created, chmod-ed or set.
   */
  create?: boolean;
  /**
   * Open a local file read-only (SQLite `mode=ro`), also on read-only
   * media. Implies `create: false`.
   */
  readOnly?: boolean;
}

const REMOTE_SCHEMES = ["libsql:", "http:", "https:", "ws:", "wss:"];

/** The local file `openDb` opens for these options, or `null` for a remote server. */
export function localDbPath(
  options: Pick<OpenDbOptions, "dataDir" | "url">,
): string | null {
  if (options.url && !options.url.startsWith("file:")) return null;
  return options.url
    ? options.url.slice("file:".length)
    : join(requireDataDir(options.dataDir), "trace.db");
}

/** Opens the shared database: a private local file by default, or a remote server. */
export async function openDb(options: OpenDbOptions): Promise<TraceDb> {
  const path = localDbPath(options);
  if (path === null) return await openRemote(options.url!, options.authToken);
  if (path === "") {
    throw new StorageError(
      "Cannot open database file: the file: URL has no path; use file:/path/to/trace.db",
    );
  }
  const access = options.readOnly
    ? "read-only"
    : options.create ?? true
    ? "create"
    : "existing";
  const opened = await openFile(path, access);
  const { url, readOnly } = opened;
  // Transactions queue for a pooled connection instead of being refused.
  const pooled = new SlottedClient(
    opened.client,
    new TransactionSlots({ slots: POOL_CONNECTIONS - RESERVED_CONNECTIONS }),
  );
  const client = readOnly ? pooled : new SecureDeleteClient(pooled, path);
  const db: TraceDb = {
    client,
    url,
    path,
    readOnly,
    close: () => {
      closeEngineConnection(db);
      client.close();
    },
  };
  if (!readOnly) engines.set(db, null);
  return db;
}

/** Handles of writable local files, with their engine connection once opened. */
const engines = new WeakMap<TraceDb, Promise<EngineConnection | null> | null>();

/**
 * The engine connection of a writable local file (`_db_engine.ts`), opened
 * on first use and closed with `db`; `null` for remote, in-memory and
 * read-only databases, for a handle {@link openDb} did not return (a copy
 * with another client expects that client to see every write), or when it
 * cannot reach the client's file.
 */
export function engineConnection(
  db: TraceDb,
): Promise<EngineConnection | null> {
  const opened = engines.get(db);
  if (opened !== undefined && opened !== null) return opened;
  if (opened === undefined || db.path === null || db.client.closed) {
    return Promise.resolve(null);
  }
  const connection = EngineConnection.open(db.path, db.client);
  engines.set(db, connection);
  return connection;
}

function closeEngineConnection(db: TraceDb): void {
  const connection = engines.get(db);
  engines.delete(db);
  void connection?.then((open) => open?.close());
}

/**
 * Runs `work`, a write transaction that lets the event loop turn, while the
 * process's other writes to the same local file wait for it
 * (`_db_write_gate.ts`); remote and in-memory databases run it as it is.
 */
export function holdWrites<T>(db: TraceDb, work: () => Promise<T>): Promise<T> {
  return db.path === null ? work() : holdFileWrites(db.path, work);
}

/**
 * A private in-memory database: one connection, gone when closed. For
 * systems that live inside one run (the reference suite's own index).
 */
export function openMemoryDb(): TraceDb {
  const client = createClient({ url: ":memory:" });
  return { client, url: ":memory:", path: null, close: () => client.close() };
}

/** Where a database lives, for messages: its file path, or its URL without credentials or query. */
export function dbLocation(db: { path: string | null; url: string }): string {
  return db.path ?? redactDbUrl(db.url);
}

/**
 * The `--data-dir` / `--db` flags that open `db` again, for a command a
 * server prints: `--data-dir` for a `trace.db` in a data directory, else
 * `--db` with the file URL or the redacted remote URL (its token stays in
 * the environment), and `--data-dir` beside it when the server keeps its
 * other files (checkpoints, the erasure key) in `dataDir`, elsewhere. Paths
 * are absolute, so the command works from any directory; each flag is a
 * shell word with a leading space.
 */
export function dataFlagsOfDb(
  db: { path: string | null; url: string },
  dataDir?: string,
): string {
  const file = db.path === null ? null : resolve(db.path);
  const dir = dataDir === undefined ? null : resolve(dataDir);
  const words = file !== null && basename(file) === "trace.db" &&
      (dir === null || dir === dirname(file))
    ? ["--data-dir", dirname(file)]
    : [
      ...(dir === null ? [] : ["--data-dir", dir]),
      "--db",
      file === null ? redactDbUrl(db.url) : `file:${file}`,
    ];
  return words.map((w) => ` ${shellWord(w)}`).join("");
}

/** A database URL safe to print: no credentials, query or fragment. */
export function redactDbUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.protocol === "file:") return url.split("?")[0]!;
    return `${parsed.protocol}//${parsed.host}${
      parsed.pathname === "/" ? "" : parsed.pathname
    }`;
  } catch {
    return "(unparseable URL)";
  }
}

function requireDataDir(dataDir: string | undefined): string {
  if (!dataDir) {
    throw new StorageError("Cannot open the database: no data directory given");
  }
  return dataDir;
}

/**
 * Refuses a remote database URL Trace would not open: not a URL, with
 * credentials or a query (the token goes in `TRACE_DB_AUTH_TOKEN`, never in
 * a URL that is printed, logged or written to a client config), or with a
 * scheme libSQL does not speak. `file:` URLs pass.
 */
export function checkRemoteDbUrl(url: string): void {
  if (url.startsWith("file:")) return;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new StorageError(
      "Cannot open database: --db is not a URL; use file:PATH or libsql://HOST",
    );
  }
  const scheme = parsed.protocol;
  if (parsed.username || parsed.password || parsed.search) {
    throw new StorageError(
      "Cannot open database: put no credentials or query in --db; set TRACE_DB_AUTH_TOKEN instead",
    );
  }
  if (!REMOTE_SCHEMES.includes(scheme)) {
    throw new StorageError(
      `Cannot open database: unsupported scheme ${
        quoteValue(scheme)
      }; use file:, libsql:, http(s): or ws(s):`,
    );
  }
}

async function openRemote(
  url: string,
  authToken: string | undefined,
): Promise<TraceDb> {
  checkRemoteDbUrl(url);
  const token = authToken ?? Deno.env.get("TRACE_DB_AUTH_TOKEN");
  const client = createClient(token ? { url, authToken: token } : { url });
  try {
    await client.execute("SELECT 1");
  } catch (error) {
    client.close();
    throw new StorageError(
      `Cannot reach database ${redactDbUrl(url)}: ${
        (error as Error).message.split("\n")[0]
      }; check --db / TRACE_DB_URL and TRACE_DB_AUTH_TOKEN`,
      { cause: error },
    );
  }
  return { client, url, path: null, close: () => client.close() };
}

/**
 * Sets `secure_delete` on the connection `tx` holds and reads it back: true
 * when that connection zeroes what it deletes. A destructive step calls it
 * inside its own transaction, since a pooled client may hand it any
 * connection; false (a remote server that refuses the pragma) means the
 * server's own setting decides.
 */
export async function secureDeleteIn(tx: Transaction): Promise<boolean> {
  try {
    await tx.execute(SECURE_DELETE_ON);
    const row = (await tx.execute("PRAGMA secure_delete")).rows[0];
    return row !== undefined && Number(Object.values(row)[0]) === 1;
  } catch {
    return false;
  }
}

/** The outcome of {@link checkpointWal}. */
export interface WalCheckpoint {
  /** False when another connection kept part of the WAL from being copied back. */
  complete: boolean;
}

/**
 * Copies the WAL back into the database file and truncates it, so that the
 * file alone holds everything once a writing command ends (a copy of
 * `trace.db` is then a whole copy). Remote and read-only databases have
 * nothing to checkpoint.
 */
export async function checkpointWal(db: TraceDb): Promise<WalCheckpoint> {
  if (db.path === null || db.readOnly) return { complete: true };
  const result = await db.client.execute("PRAGMA wal_checkpoint(TRUNCATE)");
  const row = result.rows[0];
  return { complete: !row || Number(row.busy ?? row[0]) === 0 };
}

/** Options for {@link backupDb}. */
export interface BackupOptions {
  /** Stops the backup (Ctrl-C): the copy, whole or partial, is removed and {@link BackupInterruptedError} thrown. */
  signal?: AbortSignal | undefined;
}

/** A backup stopped by its signal: its copy was removed. */
export class BackupInterruptedError extends StorageError {
  constructor(file: string) {
    super(
      `Interrupted: the backup to ${file} was stopped and its partial copy removed; run trace ledger backup again`,
    );
    this.name = "BackupInterruptedError";
  }
}

/**
 * Writes a consistent single-file copy of a local database to `file` with
 * SQLite's `VACUUM INTO` (a snapshot, WAL included; safe while other
 * processes write). Refuses an existing `file`; the copy is owner-only.
 * Whatever stops it (an SQLite error, the signal) removes the copy, so a
 * partial one is never left to be mistaken for a backup.
 */
export async function backupDb(
  db: TraceDb,
  file: string,
  options: BackupOptions = {},
): Promise<void> {
  if (db.path === null) {
    throw new StorageError(
      `Cannot back up ${
        dbLocation(db)
      }: it is a remote server; use the server's own backups`,
    );
  }
  await createEmptyPrivateFile(file);
  await refuseSidecarPath(file);
  // SQLite reads a name starting with "file:" as a URI, which would put the
  // copy elsewhere (and not owner-only); an absolute path never starts so.
  const path = resolve(file);
  try {
    stopIfAborted(options.signal, file);
    await db.client.execute({ sql: "VACUUM INTO ?", args: [path] });
    // The engine runs VACUUM on this thread: a signal that came meanwhile
    // is handled once the event loop turns again, which this lets happen.
    await new Promise((done) => setTimeout(done, 0));
    stopIfAborted(options.signal, file);
    if (Deno.build.os !== "windows") await Deno.chmod(path, 0o600);
  } catch (error) {
    await Deno.remove(file).catch(() => {});
    if (error instanceof BackupInterruptedError) throw error;
    throw new StorageError(
      `Cannot back up ${db.path} to ${file}: ${
        ((error as Error).message ?? String(error)).split("\n")[0]
      }`,
      { cause: error },
    );
  }
}

function stopIfAborted(signal: AbortSignal | undefined, file: string): void {
  if (signal?.aborted) throw new BackupInterruptedError(file);
}

/**
 * The first of `tables` the database does not hold, or `null`. A table a
 * migration created that is gone was dropped with an outside tool: callers
 * name that damage instead of failing on SQLite's "no such table".
 */
export async function firstMissingTable(
  executor: Pick<Transaction, "execute">,
  tables: readonly string[],
): Promise<string | null> {
  const present = new Set(
    (await executor.execute(
      "SELECT name FROM sqlite_master WHERE type = 'table'",
    )).rows.map((row) => String(row.name)),
  );
  return tables.find((table) => !present.has(table)) ?? null;
}

/**
 * A copy named like a database's `-journal`, `-wal` or `-shm` would be taken
 * by SQLite for that database's own file and discarded (or played back into
 * it) at its next open: the backup would vanish. Checked on the file just
 * created, so an existing file keeps its own refusal.
 */
async function refuseSidecarPath(file: string): Promise<void> {
  const kind = await stateFileKind(file);
  if (kind === null) return;
  await Deno.remove(file).catch(() => {});
  throw new StorageError(
    `Cannot back up to ${file}: SQLite would take a file there for ${kind} and discard it; choose another path`,
  );
}

/** `VACUUM INTO` accepts an empty file: creating it first refuses an existing one and fixes its mode. */
async function createEmptyPrivateFile(file: string): Promise<void> {
  try {
    const handle = await Deno.open(file, {
      createNew: true,
      write: true,
      mode: 0o600,
    });
    handle.close();
  } catch (error) {
    throw new StorageError(
      `Cannot back up to ${file}: ${await backupPathProblem(file, error)}`,
      { cause: error },
    );
  }
}

/** Why the backup file could not be created: a directory there is named as one. */
async function backupPathProblem(
  file: string,
  error: unknown,
): Promise<string> {
  const isDirectory = error instanceof Deno.errors.AlreadyExists &&
    await Deno.stat(file).then((info) => info.isDirectory, () => false);
  return isDirectory
    ? `it is a directory; name a new file in it, such as ${
      join(file, "trace-backup.db")
    }`
    : fileProblem(error, "write");
}

const MIGRATIONS_TABLE = `CREATE TABLE IF NOT EXISTS schema_migrations (
  component TEXT NOT NULL,
  version INTEGER NOT NULL,
  name TEXT NOT NULL,
  applied_at TEXT NOT NULL,
  PRIMARY KEY (component, version)
)`;

/**
 * Applies every pending migration in order; returns the ones applied now.
 * Each step runs in a write transaction that re-reads the applied versions,
 * so two processes starting at once never apply the same step twice.
 */
export async function migrate(
  db: TraceDb,
  migrations: readonly Migration[],
): Promise<Migration[]> {
  // A read first: every writing command migrates, and the usual answer is "nothing to do".
  const current = await appliedVersions(db);
  for (const [component, known] of knownVersions(migrations)) {
    refuseNewerSchema(db, component, current.get(component), known);
  }
  const pending = [...migrations]
    .filter((m) => (current.get(m.component) ?? 0) < m.version)
    .sort((a, b) =>
      a.component.localeCompare(b.component) || a.version - b.version
    );
  if (pending.length === 0) return [];
  await db.client.execute(MIGRATIONS_TABLE);
  const applied: Migration[] = [];
  for (const migration of pending) {
    if (await applyMigration(db, migration)) applied.push(migration);
  }
  if (db.path) await restrictSidecars(db.path);
  return applied;
}

function knownVersions(migrations: readonly Migration[]): Map<string, number> {
  const known = new Map<string, number>();
  for (const { component, version } of migrations) {
    known.set(component, Math.max(known.get(component) ?? 0, version));
  }
  return known;
}

/**
 * Refuses tables a newer build has upgraded past what this one knows: its
 * writes could miss what the newer schema expects of every writer (row
 * counts kept by writers, for one), and its reads could misread new columns.
 */
export function refuseNewerSchema(
  db: TraceDb,
  component: string,
  version: number | undefined,
  known: number,
): void {
  if (version === undefined || version <= known) return;
  throw new StorageError(
    `The ${component} tables in ${
      dbLocation(db)
    } are at schema version ${version}, newer than this build knows (${known}); use the trace build that upgraded them or a newer one`,
  );
}

async function applyMigration(
  db: TraceDb,
  migration: Migration,
): Promise<boolean> {
  const tx = await db.client.transaction("write");
  try {
    const current = await tx.execute({
      sql:
        "SELECT MAX(version) AS version FROM schema_migrations WHERE component = ?",
      args: [migration.component],
    });
    if (Number(current.rows[0]?.version ?? 0) >= migration.version) {
      await tx.rollback();
      return false;
    }
    for (const statement of migration.statements) await tx.execute(statement);
    await tx.execute({
      sql: "INSERT INTO schema_migrations VALUES (?, ?, ?, ?)",
      args: [
        migration.component,
        migration.version,
        migration.name,
        new Date().toISOString(),
      ],
    });
    await tx.commit();
    return true;
  } catch (error) {
    await tx.rollback().catch(() => {});
    throw new StorageError(
      `Cannot apply migration ${migration.component}/${migration.version} (${migration.name}): ${
        (error as Error).message
      }`,
      { cause: error },
    );
  } finally {
    tx.close();
  }
}

/** Returns the highest applied version per component (empty when never migrated). */
export async function appliedVersions(
  db: TraceDb,
): Promise<Map<string, number>> {
  const exists = await db.client.execute(
    "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'",
  );
  const versions = new Map<string, number>();
  if (exists.rows.length === 0) return versions;
  const rows = await db.client.execute(
    "SELECT component, MAX(version) AS version FROM schema_migrations GROUP BY component",
  );
  for (const row of rows.rows) {
    versions.set(String(row.component), Number(row.version));
  }
  return versions;
}

/**
 * Throws a clear error when `component` has not been provisioned yet, or
 * was upgraded past `known`, the newest version this build knows.
 */
export async function requireSchema(
  db: TraceDb,
  component: string,
  hint: string,
  known: number,
): Promise<void> {
  const version = (await appliedVersions(db)).get(component);
  if (version === undefined) {
    throw new StorageError(
      `No ${component} data in ${db.path ?? db.url} yet; ${hint}`,
    );
  }
  refuseNewerSchema(db, component, version, known);
}
