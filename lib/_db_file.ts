/**
 * The local database file: who may read it, how it is opened, and what a
 * reader may not do to it. Private to `lib/db.ts`.
 *
 * - Writers create a missing file owner-only, make an existing one (and its
 *   `-wal` / `-shm`) owner-only again, and set the journal pragmas.
 * - Readers never create, chmod or set a write pragma. A read-only open uses
 *   SQLite's `mode=ro`; on read-only media, where SQLite cannot create the
 *   WAL index it needs, it falls back to `immutable=1`, which is exact only
 *   while no WAL holds frames, so it is used only then.
 * - A symbolic link where the database (or its WAL files) should be is
 *   refused: following it would put run history wherever the link points.
 *
 * @module
 */

import { type Client, createClient } from "@libsql/client";
import { dirname, resolve } from "node:path";
import { ensurePrivateDir } from "./data_dir.ts";
import { StorageError } from "./errors.ts";
import { sqliteAdvice } from "./sqlite_errors.ts";
import { fileProblem } from "./file_errors.ts";

/** How long a connection waits for another's write lock. */
export const BUSY_TIMEOUT_MS = 10_000;

/** Connections in one client's pool (libSQL's default, named so transactions can be bounded below it). */
export const POOL_CONNECTIONS = 20;

/**
 * Per-connection settings of every writing connection. Nothing is written:
 * WAL stays consistent after a crash with NORMAL and skips an fsync per commit.
 */
export const WRITER_PRAGMAS = [
  "PRAGMA synchronous = NORMAL",
  "PRAGMA foreign_keys = ON",
] as const;

const IS_POSIX = Deno.build.os !== "windows";

/** The two files SQLite keeps beside a WAL-mode database. */
export const SIDECARS = ["-wal", "-shm"] as const;

/** How a local database is opened. */
export type FileAccess = "create" | "existing" | "read-only";

/** An opened local database client and how it was opened. */
export interface OpenedFile {
  client: Client;
  url: string;
  /** True when SQLite opened it read-only (`mode=ro`, or `immutable=1` on read-only media). */
  readOnly: boolean;
}

/** A reader found no database where it looked: nothing has been recorded there yet. */
export class NoDataError extends StorageError {
  /** The database file that was not there. */
  readonly path: string;

  constructor(path: string) {
    super(
      `No Trace data at ${path} yet: nothing has been recorded there; check --data-dir / --db`,
    );
    this.name = "NoDataError";
    this.path = path;
  }
}

/** Opens the file at `path` as `access` says. */
export async function openFile(
  path: string,
  access: FileAccess,
): Promise<OpenedFile> {
  try {
    if (access === "create") await prepareForWriting(path);
    else await requireExisting(path);
  } catch (error) {
    if (error instanceof StorageError) throw error;
    throw new StorageError(
      `Cannot open database file ${path}: ${
        fileProblem(error, access === "create" ? "write" : "read")
      }`,
      { cause: error },
    );
  }
  if (access === "read-only") return await openReadOnly(path);
  const opened = await openWithFallback(path, access);
  if (access === "create") await restrictSidecars(path);
  return opened;
}

/** Refuses a symbolic link (also a dangling one) at `path`. */
async function refuseSymlink(path: string): Promise<Deno.FileInfo | null> {
  let info: Deno.FileInfo;
  try {
    info = await Deno.lstat(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
  if (info.isSymlink) {
    throw new StorageError(
      `Cannot open database file ${path}: it is a symbolic link; point --data-dir or --db at the real file`,
    );
  }
  return info;
}

async function requireExisting(path: string): Promise<void> {
  const info = await refuseSymlink(path);
  if (!info) throw new NoDataError(path);
  if (!info.isFile) {
    throw new StorageError(`Cannot open database ${path}: it is not a file`);
  }
}

/** Creates the data directory and an owner-only file when missing; makes existing ones owner-only. */
async function prepareForWriting(path: string): Promise<void> {
  await ensurePrivateDir(dirname(path));
  const info = await refuseSymlink(path);
  if (info && !info.isFile) {
    throw new StorageError(`Cannot open database ${path}: it is not a file`);
  }
  if (!info) {
    try {
      const file = await Deno.open(path, {
        createNew: true,
        write: true,
        mode: 0o600,
      });
      file.close();
    } catch (error) {
      if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
    }
  }
  await makePrivate(path);
  await restrictSidecars(path);
}

/** chmod 0600, since the umask may have widened a new file and an old one may be 0666; it holds run history. */
async function makePrivate(path: string): Promise<void> {
  if (!IS_POSIX) return;
  const info = await Deno.lstat(path);
  if (info.isSymlink) {
    throw new StorageError(
      `Cannot open database file ${path}: it is a symbolic link; point --data-dir or --db at the real file`,
    );
  }
  if (((info.mode ?? 0) & 0o777) === 0o600) return;
  try {
    await Deno.chmod(path, 0o600);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) throw error;
    throw new StorageError(
      `Cannot make ${path} private (mode 0600): ${
        error instanceof Deno.errors.PermissionDenied
          ? "you do not own it"
          : (error as Error).message.split(":")[0]
      }; fix its owner or mode, then retry`,
      { cause: error },
    );
  }
}

/**
 * The WAL files hold the same data as the database: owner-only too, and never
 * links. Another connection closing the database may remove them between the
 * look and the chmod; a sidecar that is gone needs nothing.
 */
export async function restrictSidecars(path: string): Promise<void> {
  for (const suffix of SIDECARS) {
    try {
      if (await refuseSymlink(path + suffix)) await makePrivate(path + suffix);
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
  }
}

/**
 * A read-write open that sets no pragma which writes. On read-only media
 * SQLite fails the first read (it cannot create the WAL index); the reader
 * then gets the read-only fallback.
 */
async function openWithFallback(
  path: string,
  access: "create" | "existing",
): Promise<OpenedFile> {
  // libSQL percent-decodes a file: URL's path and cuts it at ? and #: encode those, so it opens `path` itself.
  const url = `file:${uriPath(path)}`;
  const client = createClient({
    url,
    timeout: BUSY_TIMEOUT_MS,
    concurrency: POOL_CONNECTIONS,
  });
  try {
    await probe(client, path);
    if (access === "create") {
      // Must precede the first table (and WAL) to take effect; lets retention return pages in small steps.
      await client.execute("PRAGMA auto_vacuum = INCREMENTAL");
      await client.execute("PRAGMA journal_mode = WAL");
    }
    for (const pragma of WRITER_PRAGMAS) await client.execute(pragma);
    return { client, url, readOnly: false };
  } catch (error) {
    client.close();
    if (error instanceof StorageError) throw error;
    if (access === "existing" && await isReadOnlyMediaError(path, error)) {
      return await openImmutable(path);
    }
    throw openError(path, error);
  }
}

async function openReadOnly(path: string): Promise<OpenedFile> {
  const url = sqliteUrl(path, "mode=ro");
  const client = createClient({
    url,
    timeout: BUSY_TIMEOUT_MS,
    concurrency: POOL_CONNECTIONS,
  });
  try {
    await probe(client, path);
    return { client, url, readOnly: true };
  } catch (error) {
    client.close();
    if (error instanceof StorageError) throw error;
    if (await isReadOnlyMediaError(path, error)) {
      return await openImmutable(path);
    }
    throw openError(path, error);
  }
}

async function openImmutable(path: string): Promise<OpenedFile> {
  const url = sqliteUrl(path, "mode=ro&immutable=1");
  const client = createClient({ url, concurrency: POOL_CONNECTIONS });
  try {
    await probe(client, path);
    return { client, url, readOnly: true };
  } catch (error) {
    client.close();
    if (error instanceof StorageError) throw error;
    throw openError(path, error);
  }
}

/**
 * Reads the schema, which is what fails when the WAL cannot be opened, and
 * refuses a database that holds tables but none of Trace's (another
 * application's file, reached through a mistaken `--data-dir` or `--db`):
 * reading it would advise creating Trace's tables there, and writing would
 * add them to it and switch its journal to WAL.
 */
async function probe(
  client: Client,
  path: string,
): Promise<void> {
  const tables = (await client.execute(
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name",
  )).rows.map((row) => String(row.name));
  if (tables.length === 0 || tables.includes("schema_migrations")) return;
  const named = tables.slice(0, 3).map((name) =>
    JSON.stringify(name.slice(0, 40))
  )
    .join(", ");
  throw new StorageError(
    `Cannot open database file ${path}: it holds another application's tables (${named}${
      tables.length > 3 ? ", …" : ""
    }) and none of Trace's; point --data-dir or --db at Trace's own database`,
  );
}

/**
 * SQLite could not open the WAL (read-only media) and no WAL holds frames
 * that `immutable=1` would miss: the database file alone is the whole truth.
 */
async function isReadOnlyMediaError(
  path: string,
  error: unknown,
): Promise<boolean> {
  const message = error instanceof Error ? error.message : String(error);
  if (!/SQLITE_(READONLY|CANTOPEN)|unable to open/i.test(message)) {
    return false;
  }
  try {
    const wal = await Deno.lstat(path + "-wal");
    return !wal.isFile || wal.size === 0;
  } catch {
    return true;
  }
}

function openError(path: string, error: unknown): StorageError {
  return new StorageError(
    `Cannot open database file ${path}: ${
      sqliteAdvice(error) ??
        ((error as Error).message ?? String(error)).split("\n")[0]
    }`,
    { cause: error },
  );
}

/**
 * A libSQL `file:` URL that reaches SQLite as a URI filename with `query`:
 * libSQL takes only its own query parameters, but percent-decodes the path
 * and hands SQLite a `file:` path as a URI. Each layer decodes once, so the
 * path is encoded twice.
 */
function sqliteUrl(path: string, query: string): string {
  const absolute = resolve(path).replaceAll("\\", "/");
  const uri = `file:${uriPath(absolute)}?${query}`;
  return `file:${uriPath(uri)}`;
}

function uriPath(text: string): string {
  return text.replace(/[%?#]/g, (c) => `%${c.charCodeAt(0).toString(16)}`);
}
