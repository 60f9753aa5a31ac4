/**
 * The erasure key: 32 random bytes in `<data-dir>/erasure.key` (hex, owner
 * only), created when the data directory is provisioned for erasure. It
 * lives beside the database, not in it, so a copy of `trace.db` alone cannot
 * be searched for a guessed subject by recomputing receipt digests. As with
 * the database files, a caller that may write (the default) makes an
 * existing key owner-only (0600) when an older build, a copy or the umask
 * left it wider; readers touch nothing.
 *
 * A lost key is never replaced behind anyone's back: when the database
 * already holds what a key made (receipts, see `madeWith`), a missing file is
 * refused, since a new key would leave every one of them unverifiable.
 *
 * @module
 */

import { join } from "node:path";
import { ensurePrivateDir } from "../../data_dir.ts";
import { StorageError } from "../../errors.ts";
import { ERASURE_KEY_BYTES } from "./erasure_subject.ts";
import type { ErasureKeyState } from "./health_alerts.ts";

/** File name of the key in the data directory. */
export const ERASURE_KEY_FILE = "erasure.key";

/**
 * The key file is missing while the database holds receipts it made: only
 * restoring it helps (a new key would leave them unverifiable). A server
 * can still serve everything else, so it tells this refusal apart.
 */
export class ErasureKeyLostError extends StorageError {
  constructor(message: string) {
    super(message);
    this.name = "ErasureKeyLostError";
  }
}

/** What a database holds that an erasure key made. */
export interface ErasureKeyUse {
  /** Records made with a key (receipts). */
  records: number;
  /** The key ids they name, most used first. */
  key_ids: readonly string[];
}

/** Options for {@link erasureKey}. */
export interface ErasureKeyOptions {
  /** Create the key when it is missing (default true); dry runs and readers that only verify pass false. */
  create?: boolean;
  /**
   * What the database already holds made with a key (`erasureKeyFor` reads
   * the ledger's receipts). When the key file is missing and this finds
   * any, the key is not created: the lost one must be restored.
   */
  madeWith?: () => Promise<ErasureKeyUse>;
}

/**
 * Reads the data directory's erasure key, creating it (owner-only) when
 * missing, unless `create` is false or `madeWith` finds records a lost key
 * made.
 */
export async function erasureKey(
  dataDir: string,
  options: ErasureKeyOptions = {},
): Promise<Uint8Array> {
  const path = join(dataDir, ERASURE_KEY_FILE);
  const existing = await readKey(path);
  if (existing) {
    if (options.create !== false) await makePrivate(path);
    return existing;
  }
  const use = await options.madeWith?.();
  if (use && use.records > 0) {
    const keys = use.key_ids.length > 0
      ? ` made with key ${use.key_ids.join(", ")}`
      : "";
    throw new ErasureKeyLostError(
      `The erasure key ${path} is missing, but the database holds ${use.records} erasure receipt${
        use.records === 1 ? "" : "s"
      }${keys}; restore ${ERASURE_KEY_FILE} from a backup of this data directory (a new key would leave them unverifiable)`,
    );
  }
  if (options.create === false) {
    throw new StorageError(
      `No erasure key at ${path}: restore it from a backup if this data directory had one (receipts are checked only with the key that made them); otherwise trace obs init creates one`,
    );
  }
  await ensurePrivateDir(dataDir);
  const key = crypto.getRandomValues(new Uint8Array(ERASURE_KEY_BYTES));
  try {
    await Deno.writeTextFile(path, toHex(key) + "\n", {
      createNew: true,
      mode: 0o600,
    });
  } catch (error) {
    // Another process created it first: use that one.
    if (error instanceof Deno.errors.AlreadyExists) {
      const raced = await readKey(path);
      if (raced) return raced;
    }
    throw new StorageError(
      `Cannot create the erasure key ${path}: ${
        (error as Error).message.split(":")[0]
      }; check the data directory's permissions`,
      { cause: error },
    );
  }
  return key;
}

/**
 * What health says of `dataDir`'s key: read without creating or changing
 * anything; `madeWith` is asked only when the file is missing.
 */
export async function erasureKeyState(
  dataDir: string,
  madeWith: () => Promise<ErasureKeyUse>,
): Promise<ErasureKeyState> {
  try {
    if (await readKey(join(dataDir, ERASURE_KEY_FILE))) return "present";
  } catch (error) {
    if (error instanceof StorageError) return "unusable";
    throw error;
  }
  return (await madeWith()).records > 0 ? "lost" : "absent";
}

async function readKey(path: string): Promise<Uint8Array | null> {
  let text: string;
  try {
    const info = await Deno.lstat(path);
    if (info.isSymlink || !info.isFile) {
      throw new StorageError(
        `Cannot use the erasure key ${path}: it is not a regular file; replace it with the key file`,
      );
    }
    text = await Deno.readTextFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    if (error instanceof StorageError) throw error;
    throw new StorageError(
      `Cannot read the erasure key ${path}: ${
        (error as Error).message.split(":")[0]
      }`,
      { cause: error },
    );
  }
  const hex = text.trim();
  if (
    !/^[0-9a-f]+$/.test(hex) || hex.length < ERASURE_KEY_BYTES * 2 ||
    hex.length % 2 !== 0
  ) {
    throw new StorageError(
      `Cannot use the erasure key ${path}: it is not ${ERASURE_KEY_BYTES} or more bytes of lower-case hex; restore it from a backup`,
    );
  }
  return Uint8Array.from(hex.match(/../g)!, (pair) => parseInt(pair, 16));
}

/** chmod 0600 unless it already is (POSIX only); a key others can read lets them test guessed subjects. */
async function makePrivate(path: string): Promise<void> {
  if (Deno.build.os === "windows") return;
  const info = await Deno.lstat(path);
  if (((info.mode ?? 0) & 0o777) === 0o600) return;
  try {
    await Deno.chmod(path, 0o600);
  } catch (error) {
    throw new StorageError(
      `Cannot make the erasure key ${path} private (mode 0600): ${
        error instanceof Deno.errors.PermissionDenied
          ? "you do not own it"
          : (error as Error).message.split(":")[0]
      }; fix its owner or mode, then retry`,
      { cause: error },
    );
  }
}

function toHex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}
