/** Reading a staging config named by `--config FILE|-`. */

import {
  parseStagingConfigText,
  type StagingConfig,
} from "../lib/contract/config.ts";
import { UsageError } from "../lib/errors.ts";
import { fileProblem } from "../lib/file_errors.ts";
import { type CliIo, mebibytes, readInput } from "./_io.ts";

/** Most bytes a staging config may hold: a few lines of JSON. */
const MAX_CONFIG_BYTES = 1024 * 1024;

/** Reads and validates the config at `path` (`-` for stdin). */
export async function loadConfig(
  path: string,
  io: CliIo,
): Promise<StagingConfig> {
  let text: string | null;
  try {
    text = await readInput(path, io, MAX_CONFIG_BYTES);
  } catch (error) {
    throw new UsageError(
      `Cannot read config ${path}: ${fileProblem(error)}`,
      { cause: error },
    );
  }
  if (text === null) {
    throw new UsageError(
      `Cannot read config ${path}: it holds more than ${
        mebibytes(MAX_CONFIG_BYTES)
      }; a staging config is a small JSON file`,
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
