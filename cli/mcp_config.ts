/**
 * `trace mcp-config`: prints ready configurations that make an MCP client
 * launch `trace mcp` over stdio, with absolute paths: the Deno runtime and
 * `cli.ts` (or the compiled `trace` binary when running compiled) and the
 * data directory. Nothing is written; paste the block your client reads.
 *
 * @module
 */

import { terminalSafeJson } from "../lib/display.ts";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { resolveDataDir } from "../lib/data_dir.ts";
import { checkRemoteDbUrl } from "../lib/db.ts";
import { READ_ONLY_ENV } from "../lib/auth/mod.ts";
import { TRACE_QUERIES_ENV } from "../lib/mcp/mod.ts";
import { parseFlags, showHelp } from "./_args.ts";
import { printJson } from "./_context.ts";
import type { Command } from "./_io.ts";
import { shellWord } from "../lib/shell_word.ts";
import { SCOPE_FLAGS, scopeArgs, scopeFromFlags } from "./mcp.ts";

const FLAGS = {
  "data-dir": { type: "string" },
  db: { type: "string" },
  name: { type: "string", default: "trace" },
  "allow-trace-queries": { type: "boolean", default: false },
  "read-only": { type: "boolean", default: false },
  json: { type: "boolean", default: false },
  help: { type: "boolean", short: "h", default: false },
  ...SCOPE_FLAGS,
} as const;

const HELP =
  `Usage: trace mcp-config [--data-dir DIR] [--db URL] [--name trace] [--allow-trace-queries]
                        [--read-only] [--application ID] [--user ID | --anonymous | --all-users]
                        [--json]

Prints client configurations that launch trace mcp over stdio with absolute
paths (the Deno runtime and cli.ts, or the compiled trace binary) and the data
directory: an mcpServers block (Claude Desktop, Claude Code .mcp.json, Cursor
and other clients of that format), a VS Code servers block (.vscode/mcp.json)
and the plain command line. Writes nothing.

Options:
  --data-dir DIR           Data directory the server uses (default $TRACE_DATA_DIR
                           or the platform dir), made absolute
  --name NAME              Server name in the configurations (default trace)
  --allow-trace-queries    Add TRACE_MCP_ALLOW_TRACE_QUERIES=true (offers trace.query_traces)
  --read-only              Add TRACE_UI_READ_ONLY=true (offers only the tools that read)
  --application, --user, --anonymous, --all-users
                           The local trace scope passed to trace mcp (see trace mcp --help)
  --json                   The configurations as one JSON object
`;

/** How a client starts the server. */
export interface LaunchSpec {
  command: string;
  args: string[];
  env: Record<string, string>;
}

/** The command that runs `trace mcp` from this installation, with absolute paths. */
export function launchCommand(serverArgs: string[]): LaunchSpec {
  if (Deno.build.standalone) {
    return { command: Deno.execPath(), args: ["mcp", ...serverArgs], env: {} };
  }
  const cli = fileURLToPath(new URL("../cli.ts", import.meta.url));
  const config = fileURLToPath(new URL("../deno.json", import.meta.url));
  return {
    command: Deno.execPath(),
    args: ["run", "-A", "--config", config, cli, "mcp", ...serverArgs],
    env: {},
  };
}

function withEnv(spec: LaunchSpec): object {
  return Object.keys(spec.env).length > 0
    ? { command: spec.command, args: spec.args, env: spec.env }
    : { command: spec.command, args: spec.args };
}

/** The configurations for `spec`, keyed by client format. */
export function clientConfigs(name: string, spec: LaunchSpec) {
  const env = Object.entries(spec.env).map(([k, value]) =>
    `${k}=${shellWord(value)}`
  );
  return {
    mcpServers: { mcpServers: { [name]: withEnv(spec) } },
    vscode: { servers: { [name]: { type: "stdio", ...withEnv(spec) } } },
    // A path with a character a terminal acts on is written as `$'…\u202e…'`:
    // the line prints safely and still runs as printed.
    command_line: [...env, ...[spec.command, ...spec.args].map(shellWord)]
      .join(" "),
  };
}

/** `trace mcp-config`: print client configurations. */
export const mcpConfig: Command = (args, io) => {
  const { values } = parseFlags("mcp-config", args, FLAGS);
  if (values.help) return Promise.resolve(showHelp(io, HELP));
  const scope = scopeFromFlags(values);
  // Refused here, as trace mcp would refuse it, before it lands in a config file.
  if (values.db !== undefined) checkRemoteDbUrl(values.db);
  const dataDir = resolve(
    resolveDataDir({ flag: values["data-dir"], env: io.env }),
  );
  const spec = launchCommand([
    "--data-dir",
    dataDir,
    ...(values.db === undefined ? [] : ["--db", values.db]),
    ...scopeArgs(scope),
  ]);
  if (values["allow-trace-queries"]) {
    spec.env[TRACE_QUERIES_ENV] = "true";
  }
  if (values["read-only"]) spec.env[READ_ONLY_ENV] = "true";
  const configs = clientConfigs(values.name, spec);
  if (values.json) {
    printJson(io, { name: values.name, ...spec, ...configs });
    return Promise.resolve(0);
  }
  // A path may hold any character: none that a terminal acts on is printed raw.
  io.out(
    [
      "# Claude Desktop (claude_desktop_config.json), Claude Code (.mcp.json), Cursor",
      "# and other clients that read an mcpServers block:",
      terminalSafeJson(JSON.stringify(configs.mcpServers, null, 2)),
      "",
      "# VS Code (.vscode/mcp.json):",
      terminalSafeJson(JSON.stringify(configs.vscode, null, 2)),
      "",
      "# Any other client: run this command over stdio:",
      configs.command_line,
      "",
      "# Over HTTP instead: run trace serve with TRACE_UI_AUTH_TOKEN set, then point the",
      "# client at http://127.0.0.1:8788/mcp with the header Authorization: Bearer <that token>.",
      "",
    ].join("\n"),
  );
  return Promise.resolve(0);
};
