/**
 * Files that hold Trace's state, recognised by what they contain, so a
 * command told to replace a file (`--force`) never replaces one of them: a
 * SQLite database (the ledger and the index live in one), the journal,
 * write-ahead log or shared-memory index beside a database, and a run's
 * checkpoint. By content rather than by path: the same file is reached by
 * many paths (relative forms, symbolic links, another `--data-dir`).
 *
 * @module
 */

import {
  basename,
  dirname,
  isAbsolute,
  join,
  relative,
  resolve,
  sep as SEPARATOR,
} from "node:path";

const SQLITE_HEADER = "SQLite format 3\u0000";
/** The big-endian magic numbers a SQLite write-ahead log starts with. */
const WAL_MAGIC = [0x377f0682, 0x377f0683];
/** The files SQLite keeps beside a database, by suffix. */
const SIDECARS: Record<string, string> = {
  "-wal": "the write-ahead log of a SQLite database",
  "-shm": "the shared-memory index of a SQLite database",
  "-journal": "the rollback journal of a SQLite database",
};
const CHECKPOINT = /^\s*\{\s*"schema"\s*:\s*"trace\.checkpoint\//;

/**
 * What state `path` holds, in words (`"a SQLite database"`), or `null` when
 * it is none of Trace's state (or cannot be read). A path where a database's
 * sidecar would be counts as one even before it exists: SQLite would read
 * whatever is written there as its own.
 */
export async function stateFileKind(path: string): Promise<string | null> {
  const head = await firstBytes(path, 64) ?? new Uint8Array();
  const text = new TextDecoder().decode(head);
  if (text.startsWith(SQLITE_HEADER)) return "a SQLite database";
  const magic = head.length >= 4
    ? new DataView(head.buffer, head.byteOffset).getUint32(0)
    : -1;
  if (WAL_MAGIC.includes(magic)) return SIDECARS["-wal"]!;
  if (CHECKPOINT.test(text)) return "a run's checkpoint";
  // An empty or fresh sidecar has no header yet: known by its database.
  for (const [suffix, kind] of Object.entries(SIDECARS)) {
    const name = basename(path);
    if (!name.endsWith(suffix) || name === suffix) continue;
    const database = join(dirname(path), name.slice(0, -suffix.length));
    const dbHead = await firstBytes(database, SQLITE_HEADER.length);
    if (dbHead && new TextDecoder().decode(dbHead) === SQLITE_HEADER) {
      return kind;
    }
  }
  return null;
}

async function firstBytes(path: string, n: number): Promise<Uint8Array | null> {
  // Opening a FIFO to read waits until something writes to it: look first.
  const info = await Deno.stat(path).catch(() => null);
  if (!info?.isFile) return null;
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path, { read: true });
  } catch {
    return null;
  }
  try {
    if (!(await file.stat()).isFile) return null;
    const buffer = new Uint8Array(n);
    let filled = 0;
    while (filled < n) {
      const read = await file.read(buffer.subarray(filled));
      if (read === null) break;
      filled += read;
    }
    return buffer.subarray(0, filled);
  } catch {
    return null;
  } finally {
    file.close();
  }
}

/**
 * True when `path` (which need not exist yet) is `dir` or lies inside it.
 * Compared after following symbolic links as far as each path exists, so a
 * link or a `..` cannot hide that two spellings name the same place.
 */
export async function isInside(path: string, dir: string): Promise<boolean> {
  const [target, folder] = await Promise.all([
    realPathSoFar(path),
    realPathSoFar(dir),
  ]);
  const rest = relative(folder, target);
  // `..copy.json` is a name inside; only a first segment of `..` leads out.
  const out = rest === ".." || rest.startsWith(`..${SEPARATOR}`);
  return rest === "" || (!out && !isAbsolute(rest));
}

/** The real path of the longest existing prefix of `path`, with the rest appended. */
async function realPathSoFar(path: string): Promise<string> {
  const absolute = resolve(path);
  try {
    return await Deno.realPath(absolute);
  } catch {
    const parent = dirname(absolute);
    if (parent === absolute) return absolute;
    return join(await realPathSoFar(parent), basename(absolute));
  }
}
