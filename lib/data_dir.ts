/** Resolution of the one data directory shared by CLI, UI and MCP. */

import { isAbsolute, join } from "node:path";
import { nonEmptyEnv } from "./env_switch.ts";
import { StorageError } from "./errors.ts";

/** Options for {@link resolveDataDir}. */
export interface DataDirOptions {
  /** Explicit `--data-dir` flag; wins over everything. */
  flag?: string | undefined;
  /** Environment lookup, injectable for tests. */
  env?: (name: string) => string | undefined;
}

/**
 * Returns `--data-dir`, else `$TRACE_DATA_DIR`, else the platform data dir.
 * `TRACE_DATA_DIR` set but empty (a CI variable that did not expand) throws
 * a `ConfigError` rather than silently picking the default directory.
 */
export function resolveDataDir(options: DataDirOptions = {}): string {
  const env = options.env ?? ((name: string) => Deno.env.get(name));
  if (options.flag) return options.flag;
  const fromEnv = nonEmptyEnv(
    "TRACE_DATA_DIR",
    env("TRACE_DATA_DIR"),
    "set it to a directory, or unset it for the default data directory",
  );
  if (fromEnv) return fromEnv;
  return join(platformDataHome(env), "trace");
}

/**
 * `--db`, else `$TRACE_DB_URL`, else `undefined` (the data directory's
 * `trace.db`). `TRACE_DB_URL` set but empty throws a `ConfigError`: a remote
 * database whose variable did not expand must not silently become a local
 * file.
 */
export function resolveDbUrl(
  flag: string | undefined,
  env: (name: string) => string | undefined,
): string | undefined {
  if (flag !== undefined) return flag;
  return nonEmptyEnv(
    "TRACE_DB_URL",
    env("TRACE_DB_URL"),
    "set it to the database URL, or unset it to use trace.db in the data directory",
  );
}

function platformDataHome(env: (name: string) => string | undefined): string {
  // An empty variable counts as unset, as the XDG Base Directory
  // specification says (a relative XDG_DATA_HOME is invalid and ignored too):
  // else the data would land in a `trace` folder of the working directory.
  const set = (name: string) => env(name) || undefined;
  const home = set("HOME") ?? set("USERPROFILE") ?? ".";
  switch (Deno.build.os) {
    case "darwin":
      return join(home, "Library", "Application Support");
    case "windows":
      return set("LOCALAPPDATA") ?? join(home, "AppData", "Local");
    default: {
      const xdg = set("XDG_DATA_HOME");
      return xdg !== undefined && isAbsolute(xdg)
        ? xdg
        : join(home, ".local", "share");
    }
  }
}

/**
 * Creates `dir` (and parents) with owner-only permissions. An existing
 * directory is left as it is: it may be shared (`/tmp`) and is not ours to
 * change. A path that exists but is not a directory is refused.
 */
export async function ensurePrivateDir(dir: string): Promise<void> {
  if (await refuseFileAsDir(dir)) return;
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  // mkdir's mode is filtered by the umask; make the new directory private explicitly.
  if (Deno.build.os !== "windows") await Deno.chmod(dir, 0o700);
}

/**
 * Refuses a data directory that is a file, saying so, where opening the
 * database inside it would only report a path that is not a directory;
 * returns whether `dir` exists (a missing one is for the caller to create
 * or report).
 */
export async function refuseFileAsDir(dir: string): Promise<boolean> {
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(dir);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    // A parent that is a file: the open names the path as it is.
    if (error instanceof Deno.errors.NotADirectory) return false;
    throw error;
  }
  if (!info.isDirectory) {
    throw new StorageError(
      `Cannot use ${dir} as a data directory: it is a file; choose a directory`,
    );
  }
  return true;
}
