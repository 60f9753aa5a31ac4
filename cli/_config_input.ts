/** Reading a staging config named by `--config FILE|-`. */

import {
  parseStagingConfigText,
  type StagingConfig,
} from "../lib/contract/config.ts";
import { UsageError } from "../lib/errors.ts";
import { type CliIo, readInput } from "./_io.ts";

/** Reads and validates the config at `path` (`-` for stdin). */
export async function loadConfig(
  path: string,
  io: CliIo,
): Promise<StagingConfig> {
  let text: string;
  try {
    text = await readInput(path, io);
  } catch (error) {
    throw new UsageError(
      `Cannot read config ${path}: ${fileErrorWords(error)}`,
      { cause: error },
    );
  }
  return parseStagingConfigText(
    text,
    `config ${path === "-" ? "(stdin)" : path}`,
  );
}

/** Reads `--config FILE|-` for a command; throws a usage error when absent. */
export async function requireConfig(
  path: string | undefined,
  command: string,
  io: CliIo,
): Promise<StagingConfig> {
  if (!path) {
    throw new UsageError(
      `--config FILE (or - for stdin) is required; see trace ${command} --help`,
    );
  }
  return await loadConfig(path, io);
}

/** Short words for a file system error (never the OS's multi-part message). */
export function fileErrorWords(error: unknown): string {
  if (error instanceof Deno.errors.NotFound) {
    return "no such file; check the path";
  }
  if (error instanceof Deno.errors.PermissionDenied) {
    return "permission denied; check the file's permissions";
  }
  if (error instanceof Deno.errors.IsADirectory) {
    return "it is a directory; give a file";
  }
  return (error as Error).message.split("\n")[0] ?? "unknown error";
}
