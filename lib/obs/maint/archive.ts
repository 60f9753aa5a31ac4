/**
 * A directory archive for source expiry: the envelopes go to a new private
 * NDJSON file, and the callback acknowledges (`{archived: true, location}`)
 * only after the file (and on POSIX its directory entry) reached stable
 * storage. The file is written under a temporary name and published whole,
 * so a name like `expiry-….ndjson` only ever holds a finished archive. The
 * acknowledgement names that file, by its absolute path, as the location the
 * expiry records for each envelope, so an erasure can name the file that
 * still holds its subject.
 *
 * @module
 */

import { basename, dirname, join, resolve } from "node:path";
import { ensurePrivateDir } from "../../data_dir.ts";
import { RefusedError, StorageError } from "../../errors.ts";
import type { EnvelopeRecord } from "./envelopes.ts";
import type { ArchiveReceipt } from "./expiry.ts";

/** Where a directory archive wrote, for the operator's report. */
export interface ArchiveWrite {
  /** The NDJSON file written, as an absolute path. */
  path: string;
  /** Envelopes in it. */
  envelopes: number;
  /** Its size in bytes. */
  bytes: number;
}

/** Returns an archive callback writing `expiry-<label>-<time>.ndjson` files into `dir`, each named in its receipt. */
export function directoryArchive(
  dir: string,
  label: string,
  onWrite: (write: ArchiveWrite) => void = () => {},
): (envelopes: readonly EnvelopeRecord[]) => Promise<ArchiveReceipt> {
  return async (envelopes) => {
    const stamp = new Date().toISOString().replaceAll(":", "").replaceAll(
      ".",
      "",
    );
    // Absolute, as the operator gave it: an erasure names it from any directory.
    const path = resolve(
      dir,
      `expiry-${archiveLabel(label)}-${stamp}.ndjson`,
    );
    const text =
      envelopes.map((envelope) => JSON.stringify(envelope)).join("\n") + "\n";
    const bytes = new TextEncoder().encode(text);
    try {
      await ensurePrivateDir(dir);
      await writeArchiveFile(path, bytes);
      await syncDirectory(dir);
    } catch (error) {
      throw new StorageError(
        error instanceof StorageError
          ? `Cannot write the archive in ${dir}: it is not a directory; choose a directory`
          : `Cannot write the archive ${path}: ${osReason(error)}`,
        { cause: error },
      );
    }
    onWrite({ path, envelopes: envelopes.length, bytes: bytes.length });
    return { archived: true, location: path };
  };
}

/** The label as it appears in archive names: letters, digits, `_` and `-`. */
function archiveLabel(label: string): string {
  return label.replace(/[^A-Za-z0-9_-]/g, "");
}

/** One apply's hold on a plan's archives in a directory; dispose of it when the apply ends. */
export interface ArchiveClaim extends AsyncDisposable {
  /** Names of unfinished archives of this plan, left by a killed apply, that the claim removed. */
  removedPartials: string[];
}

/**
 * Claims the archives of the plan `label` in `dir` for one apply: an
 * exclusive OS lock on `.expiry-<label>.lock`, taken without waiting, so a
 * second apply of the same plan is refused at once instead of archiving
 * the same envelopes twice. The OS drops the lock when its process dies
 * (`kill -9` included), so a crash never blocks the next apply; that apply
 * then removes the `.partial` files the dead one left, which no other
 * process can be writing while the lock is held.
 */
export async function claimArchive(
  dir: string,
  label: string,
): Promise<ArchiveClaim> {
  const safe = archiveLabel(label);
  try {
    await ensurePrivateDir(dir);
  } catch (error) {
    throw new StorageError(
      error instanceof StorageError
        ? `Cannot write the archive in ${dir}: it is not a directory; choose a directory`
        : `Cannot write the archive in ${dir}: ${osReason(error)}`,
      { cause: error },
    );
  }
  const lockPath = join(dir, `.expiry-${safe}.lock`);
  const lock = await lockFile(lockPath);
  try {
    const removedPartials = await removePartials(dir, safe);
    return {
      removedPartials,
      async [Symbol.asyncDispose]() {
        // Removed while still locked: a later apply then opens a new file.
        await Deno.remove(lockPath).catch(() => {});
        lock.close();
      },
    };
  } catch (error) {
    lock.close();
    throw error;
  }
}

/**
 * Opens and locks `path` without waiting. A holder removes the file before
 * it unlocks, so a lock won on a file no longer at `path` is stale: open
 * again.
 */
async function lockFile(path: string): Promise<Deno.FsFile> {
  for (let attempt = 0;; attempt++) {
    await refuseOddLock(path);
    let file: Deno.FsFile;
    try {
      file = await Deno.open(path, {
        read: true,
        write: true,
        create: true,
        mode: 0o600,
      });
    } catch (error) {
      throw new StorageError(
        `Cannot lock the archive ${path}: ${osReason(error)}`,
        { cause: error },
      );
    }
    if (!(await file.tryLock(true))) {
      file.close();
      throw new RefusedError(
        `Cannot apply the expiry plan: another apply of this plan is running (it holds ${path}); wait for it to finish, then apply again if it did not finish the plan`,
      );
    }
    const held = (await file.stat()).ino;
    const named = await Deno.lstat(path).then((info) => info.ino, () => null);
    if (held === named) return file;
    file.close();
    if (attempt === 2) {
      throw new RefusedError(
        `Cannot apply the expiry plan: another apply of this plan keeps replacing ${path}; wait for it to finish`,
      );
    }
  }
}

/**
 * Refuses a lock path that is not a regular file or absent: opening a
 * symbolic link would create or lock the file it points to (anywhere, for
 * root), and anything else cannot be a lock this code made.
 */
async function refuseOddLock(path: string): Promise<void> {
  const info = await Deno.lstat(path).catch(() => null);
  if (info === null || info.isFile) return;
  throw new StorageError(
    `Cannot lock the archive ${path}: it is ${
      info.isSymlink ? "a symbolic link" : "not a regular file"
    }, not a lock an apply made; remove it, then apply again`,
  );
}

/** The name of an unfinished archive of the plan `label`: `.expiry-<label>-<time>.ndjson.<uuid>.partial`. */
function partialPattern(label: string): RegExp {
  return new RegExp(
    `^\\.expiry-${label}-\\d{4}-\\d{2}-\\d{2}T\\d{9}Z\\.ndjson\\.[0-9a-f-]{36}\\.partial$`,
  );
}

/** Removes the unfinished archives of the plan `label` in `dir` (never another plan's); returns their names. */
async function removePartials(dir: string, label: string): Promise<string[]> {
  const partial = partialPattern(label);
  const removed: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    if (!entry.isFile || !partial.test(entry.name)) continue;
    await Deno.remove(join(dir, entry.name));
    removed.push(entry.name);
  }
  return removed.sort();
}

/** Writes all of `bytes` to an open file. */
export type ArchiveWriter = (
  file: Deno.FsFile,
  bytes: Uint8Array,
) => Promise<void>;

async function writeAll(file: Deno.FsFile, bytes: Uint8Array): Promise<void> {
  let written = 0;
  while (written < bytes.length) {
    written += await file.write(bytes.subarray(written));
  }
}

/**
 * Writes `bytes` to the new file `path` through a synced temporary file in
 * the same directory, then links it to `path`: an interrupted write or a full
 * disk never leaves a partial file under the final name, and a link, unlike
 * a rename, refuses a name that exists, so an archive never replaces an
 * earlier one. The temporary is removed whatever happens.
 */
export async function writeArchiveFile(
  path: string,
  bytes: Uint8Array,
  write: ArchiveWriter = writeAll,
): Promise<void> {
  const temporary = join(
    dirname(path),
    `.${basename(path)}.${crypto.randomUUID()}.partial`,
  );
  try {
    const file = await Deno.open(temporary, {
      createNew: true,
      write: true,
      mode: 0o600,
    });
    try {
      await write(file, bytes);
      await file.sync();
    } finally {
      file.close();
    }
    await Deno.link(temporary, path);
  } finally {
    await Deno.remove(temporary).catch(() => {});
  }
}

/** A file system error as a short reason with what to do, without the OS error text. */
function osReason(error: unknown): string {
  if (error instanceof Deno.errors.AlreadyExists) {
    return "the file already exists; choose a new path";
  }
  if (error instanceof Deno.errors.NotFound) {
    return "the directory does not exist; create it or choose another path";
  }
  if (error instanceof Deno.errors.PermissionDenied) {
    return "permission denied; choose a path you can write to";
  }
  if (error instanceof Deno.errors.IsADirectory) {
    return "it is a directory; name a file";
  }
  if (error instanceof Deno.errors.NotADirectory) {
    return "a part of the path is not a directory; choose another path";
  }
  const message = error instanceof Error ? error.message : String(error);
  const short = message.split("\n")[0]!.replace(/\s*\(os error \d+\).*$/, "");
  return `${short.charAt(0).toLowerCase()}${
    short.slice(1)
  }; check the path and free space`;
}

async function syncDirectory(dir: string): Promise<void> {
  if (Deno.build.os === "windows") return;
  const handle = await Deno.open(dir, { read: true });
  try {
    await handle.sync();
  } finally {
    handle.close();
  }
}
