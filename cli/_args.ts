/**
 * Flag parsing over `node:util` `parseArgs` (the seam where `@std/cli` would
 * go). Unknown flags and missing values become {@link UsageError}s.
 *
 * @module
 */

import { parseArgs, type ParseArgsConfig } from "node:util";
import { redactDbUrl } from "../lib/db.ts";
import { UsageError } from "../lib/errors.ts";

/** Flag declarations in `node:util` form. */
export type FlagSpec = NonNullable<ParseArgsConfig["options"]>;

/** Flags every data-touching command accepts. */
export const DATA_FLAGS = {
  "data-dir": { type: "string" },
  db: { type: "string" },
  json: { type: "boolean", default: false },
  help: { type: "boolean", short: "h", default: false },
} as const satisfies FlagSpec;

/**
 * Parses `args` for `command`; throws a one-line usage error naming the flag.
 * Messages carry no command prefix: `main()` adds `trace <command>:` once.
 */
export function parseFlags<const T extends FlagSpec>(
  command: string,
  args: string[],
  options: T,
  positionals: { min?: number; max?: number } = {},
) {
  let parsed;
  try {
    parsed = parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    const detail = (error as Error).message.split("\n")[0]?.replace(
      /\. To specify.*$/,
      "",
    );
    throw new UsageError(`${detail}; see trace ${command} --help`);
  }
  const count = parsed.positionals.length;
  if (!(parsed.values as { help?: boolean }).help) {
    if (positionals.min !== undefined && count < positionals.min) {
      throw new UsageError(
        `Missing argument; see trace ${command} --help`,
      );
    }
    if (count > (positionals.max ?? 0)) {
      throw new UsageError(
        `Unexpected argument "${
          parsed.positionals[positionals.max ?? 0]
        }"; see trace ${command} --help`,
      );
    }
  }
  return parsed;
}

/** Prints a command's help text; returns exit code 0. */
export function showHelp(
  io: { out(text: string): void },
  text: string,
): number {
  io.out(text);
  return 0;
}

/** Where a database lives, for messages: its file path, or its URL without credentials or query. */
export function dbLocation(db: { path: string | null; url: string }): string {
  return db.path ?? redactDbUrl(db.url);
}
