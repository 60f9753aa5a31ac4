/**
 * `trace init [FILE]`: writes a starter staging config with a comment on
 * every key, checks that Trace reads it back as written, and says what to do
 * next.
 *
 * @module
 */

import { stateFileKind } from "../lib/state_files.ts";
import { parseStagingConfigText } from "../lib/contract/config.ts";
import { UsageError } from "../lib/errors.ts";
import { fileProblem } from "../lib/file_errors.ts";
import { parseFlags, showHelp } from "./_args.ts";
import { printJson } from "./_context.ts";
import type { Command } from "./_io.ts";
import { shellWord } from "../lib/shell_word.ts";
import { terminalSafe } from "../lib/display.ts";

const FLAGS = {
  "base-url": { type: "string", default: "http://127.0.0.1:8787" },
  force: { type: "boolean", default: false },
  json: { type: "boolean", default: false },
  help: { type: "boolean", short: "h", default: false },
} as const;

const HELP = `Usage: trace init [FILE] [--base-url URL] [--force] [--json]

Writes a starter staging config (default FILE: staging.json) with a comment
on every key, for a staging adapter at URL (default http://127.0.0.1:8787,
the demo app). An existing FILE is refused unless --force; a directory, a
FIFO, a symbolic link, a database or its sidecar files even then. Trace reads
comments (// and /* */) in config files, so the file works as written.
`;

/** The starter config, with a comment on every key (kept valid by a test). */
export function starterConfig(baseUrl: string): string {
  return `// A staging adapter for Trace's deletion contract (trace-staging/1).
// Every key is explained in the README ("Point Trace at your staging app").
{
  // Your adapter: POST <base_url>/ingest, /query, /inventory and /delete.
  // Plain http:// only on loopback; https:// anywhere else. No credentials in the URL.
  "base_url": ${JSON.stringify(baseUrl)},

  // You declare that this is a staging environment Trace may write to.
  "environment": "staging",
  "allow_synthetic_writes": true,

  // A bearer token for an https:// adapter: the NAME of an environment
  // variable holding it (the value never reaches a file or a report).
  // "token_env": "STAGING_ADAPTER_TOKEN",

  // Canary documents written per run (1 to 1000).
  "document_count": 3,

  // How long your application may take to forget after deleting, and how
  // often Trace samples every store during that window.
  "deletion_window_seconds": 5,
  "sample_interval_seconds": 1,

  // Budget of each request (connect, headers and body), in seconds.
  "timeout_seconds": { "ingest": 10, "query": 10, "inventory": 10, "delete": 10 }
}
`;
}

/** The commands to run after init; a comment says what the less obvious ones do. */
function nextCommands(path: string): [command: string, comment?: string][] {
  const config = shellWord(path);
  return [
    [
      `trace external-plan --config ${config}`,
      "what a run would do; nothing is sent",
    ],
    [`trace external-register --target my-staging --config ${config}`],
    [
      "trace external-run --target my-staging",
      "PASS, FAIL or INCONCLUSIVE, with the evidence",
    ],
  ];
}

// The comments start in one column and as shell comments, so each line
// pastes into a shell as it is printed.
function nextSteps(path: string): string {
  const commands = nextCommands(path);
  const width = Math.max(
    ...commands.map(([command, comment]) => comment ? command.length : 0),
  );
  const lines = commands.map(([command, comment], index) => {
    const step = `  ${index + 2}. ${command}`;
    return comment
      ? `  ${index + 2}. ${command.padEnd(width)}  # ${comment}`
      : step;
  });
  return `Wrote ${terminalSafe(path)}. Next:
  1. Point base_url at your adapter (or try it now against the demo: trace demo).
${lines.join("\n")}
`;
}

/**
 * Refuses a path that `--force` must not write through: a directory, a FIFO
 * (opening it would wait for a reader), a symbolic link (the write would land
 * wherever it points) and Trace's own state files.
 */
async function refuseUnreplaceable(path: string): Promise<void> {
  const info = await Deno.lstat(path).catch(() => null);
  if (info && !info.isFile) {
    throw new UsageError(
      `Cannot write ${path}: ${
        info.isDirectory
          ? "it is a directory; name a file"
          : info.isSymlink
          ? "it is a symbolic link, which trace init never writes through; name the file itself or another path"
          : "it is not a regular file; name a file"
      }`,
    );
  }
  const state = await stateFileKind(path);
  if (state) {
    throw new UsageError(
      `Cannot write ${path}: it is ${state}, which trace init never replaces (not even with --force); choose another path`,
    );
  }
}

/** `trace init`: a commented starter config and the next steps. */
export const init: Command = async (args, io) => {
  const { values, positionals } = parseFlags("init", args, FLAGS, { max: 1 });
  if (values.help) return showHelp(io, HELP);
  const path = positionals[0] ?? "staging.json";
  const text = starterConfig(values["base-url"]);
  // A URL the config rules refuse is reported before any file is written.
  const config = parseStagingConfigText(text, "starter config (--base-url)");
  await refuseUnreplaceable(path);
  try {
    await Deno.writeTextFile(path, text, {
      createNew: !values.force,
      mode: 0o644,
    });
  } catch (error) {
    throw new UsageError(
      `Cannot write ${path}: ${
        error instanceof Deno.errors.AlreadyExists
          ? "the file already exists; choose another path or pass --force"
          : fileProblem(error, "write")
      }`,
    );
  }
  if (values.json) printJson(io, { ok: true, path, config });
  else io.out(nextSteps(path));
  return 0;
};
