/**
 * `trace mcp`: the MCP server over stdio, for an assistant that launches it
 * as a child process. stdout carries the protocol only; diagnostics go to
 * stderr. The caller is the machine's user; trace queries (when enabled)
 * are bound to the explicit local scope of `--application`, `--user`,
 * `--anonymous` (the default: anonymous events only) or `--all-users`.
 *
 * @module
 */

import { terminalSafe } from "../lib/display.ts";
import process from "node:process";
import type { Readable } from "node:stream";
import { dbLocation } from "../lib/db.ts";
import { errorMessage, UsageError } from "../lib/errors.ts";
import type { RefusedLine, TraceScope } from "../lib/mcp/mod.ts";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { idFlag, parseFlags, showHelp } from "./_args.ts";
import { openDataContext } from "./_context.ts";
import { type CliIo, type Command, untilInterrupted } from "./_io.ts";
import type { RunJobs } from "../lib/runs/mod.ts";

/** Flags that bind the local trace scope (shared with `trace mcp-config`). */
export const SCOPE_FLAGS = {
  application: { type: "string" },
  user: { type: "string" },
  anonymous: { type: "boolean", default: false },
  "all-users": { type: "boolean", default: false },
} as const;

const FLAGS = {
  "data-dir": { type: "string" },
  db: { type: "string" },
  help: { type: "boolean", short: "h", default: false },
  ...SCOPE_FLAGS,
} as const;

const HELP = `Usage: trace mcp [--data-dir DIR] [--db URL] [--application ID]
                 [--user ID | --anonymous | --all-users]

Serves Trace's MCP tools over stdin/stdout for an assistant that launches it
(see trace mcp-config for ready client configurations). Nine external tools
over registered targets (register them first with trace external-register),
eight reference tools, and trace.query_traces when
TRACE_MCP_ALLOW_TRACE_QUERIES=true. TRACE_UI_READ_ONLY=true offers only the
tools that read, as trace serve does. One external run at a time; closing
stdin or Ctrl-C cancels a running run (its cleanup still runs) and exits.
A target's token_env is read from the environment the client started this
server with: name the variable in the env of the client's entry for it.

Trace scope (trace.query_traces only; tool arguments can only narrow it):
  --application ID   Only events of this application (default: any application)
  --user ID          Only events of this user
  --anonymous        Only anonymous events (the default when --user is absent)
  --all-users        Events of every user (of --application when given): opt in,
                     since an assistant then reads every user's metadata
`;

type ScopeValues = {
  application?: string | undefined;
  user?: string | undefined;
  anonymous?: boolean | undefined;
  "all-users"?: boolean | undefined;
};

/**
 * The local trace scope the flags bind: anonymous users unless `--user`
 * names one or `--all-users` opens every user (no `user_id` in the scope).
 */
export function scopeFromFlags(values: ScopeValues): TraceScope {
  const users = [
    values.user !== undefined ? "--user ID" : null,
    values.anonymous ? "--anonymous" : null,
    values["all-users"] ? "--all-users" : null,
  ].filter((flag) => flag !== null);
  if (users.length > 1) {
    throw new UsageError(
      `Give one of --user ID, --anonymous or --all-users, not ${
        users.join(" and ")
      }; see trace mcp --help`,
    );
  }
  const scope: TraceScope = values["all-users"] ? {} : {
    user_id: values.user === undefined ? null : idFlag("user", values.user),
  };
  if (values.application !== undefined) {
    scope.application_id = idFlag("application", values.application);
  }
  return scope;
}

/** The scope flags that reproduce `scope` on a command line. */
export function scopeArgs(scope: TraceScope): string[] {
  return [
    ...(scope.application_id === undefined
      ? []
      : ["--application", scope.application_id]),
    ...(scope.user_id === undefined
      ? ["--all-users"]
      : typeof scope.user_id === "string"
      ? ["--user", scope.user_id]
      : ["--anonymous"]),
  ];
}

/**
 * What stderr and the answer say of a line refused before the transport:
 * -32700 for a line that is not strict JSON, -32600 for JSON that is no
 * JSON-RPC 2.0 request, notification or response, -32000 for a line longer
 * than `/mcp` takes a body (each answered with its id when it gave a valid
 * one).
 */
function refusedLine(
  refused: RefusedLine,
): { log: string; error: { code: number; message: string } } {
  if (refused.code === -32000) {
    // Too long to read: the reason says what to send instead.
    return {
      log: `line ${refused.line} of stdin refused: ${refused.reason}`,
      error: {
        code: refused.code,
        message:
          `Request too large at line ${refused.line} of stdin: ${refused.reason}`,
      },
    };
  }
  const column = refused.column === null ? { log: "", answer: "" } : {
    log: ` at column ${refused.column}`,
    answer: `, column ${refused.column}`,
  };
  const label = refused.code === -32600 ? "Invalid Request" : "Parse error";
  return {
    log:
      `line ${refused.line} of stdin refused: ${refused.reason}${column.log}`,
    error: {
      code: refused.code,
      message:
        `${label}: ${refused.reason} at line ${refused.line} of stdin${column.answer}`,
    },
  };
}

/**
 * The JSON-RPC error for a stdin line the SDK could not read (-32600, which
 * the SDK reports as its schema library's issue dump): a batch, a response
 * it cannot read, or `params._meta` of the wrong shape. Lines that are not
 * JSON, or no JSON-RPC 2.0 request, notification or response, never reach
 * it ({@link refusedLine}).
 */
function unreadableLine(
  error: Error,
): { log: string; error: { code: number; message: string } } | null {
  if (error.name === "ZodError") {
    const what =
      'a line on stdin is not a JSON-RPC message (jsonrpc: "2.0" with a method, or a result or error and an id)';
    return {
      log: what,
      error: { code: -32600, message: `Invalid Request: ${what}` },
    };
  }
  return null;
}

/**
 * Resolves when the client closes our stdin (it is done with us) and the
 * transport has read every line before the close, so a tool call on the
 * last line is already running when the caller counts them; or when the
 * transport has closed itself, after which nothing more would be read.
 */
function stdinClosed(lines: Readable, server: McpServer): Promise<void> {
  return new Promise((resolve) => {
    lines.once("end", () => resolve());
    lines.once("close", () => resolve());
    server.server.onclose = () => resolve();
  });
}

/**
 * What a run started over stdio says when its target's `token_env` is
 * unset: this process has the environment its MCP client gave it, which the
 * client's configuration decides, not the user's shell.
 */
function stdioTokenEnvRemedy(variable: string): string {
  return `trace mcp has only the environment its MCP client started it with: add "env": {"${variable}": "…"} to the client's configuration entry for the trace server (trace mcp-config prints that entry), then restart the server from the client`;
}

/** `trace mcp`: serve the tools over stdio until stdin closes or a signal arrives. */
export const mcp: Command = async (args, io) => {
  const { values } = parseFlags("mcp", args, FLAGS);
  if (values.help) return showHelp(io, HELP);
  const scope = scopeFromFlags(values);
  const {
    createTraceMcpServer,
    describeScope,
    guardToolCalls,
    localPrincipal,
    localToolPolicy,
    strictStdinLines,
    ToolCalls,
    toolsFor,
    TRACE_QUERIES_ENV,
    traceQueriesAllowed,
  } = await import("../lib/mcp/mod.ts");
  const { StdioServerTransport } = await import(
    "@modelcontextprotocol/sdk/server/stdio.js"
  );
  const { RunJobs } = await import("../lib/runs/mod.ts");
  const { READ_ONLY_ENV, readOnlyFromEnv } = await import(
    "../lib/auth/mod.ts"
  );
  const allowTraceQueries = traceQueriesAllowed(io.env(TRACE_QUERIES_ENV));
  const readOnly = readOnlyFromEnv(io.env(READ_ONLY_ENV));
  const refuseTool = localToolPolicy({ readOnly });
  const { db, dataDir } = await openDataContext(values, io, { write: true });
  const jobs = new RunJobs({
    db,
    dataDir,
    env: io.env,
    tokenEnvRemedy: stdioTokenEnvRemedy,
  });
  const calls = new ToolCalls();
  const server = createTraceMcpServer({
    calls,
    db,
    dataDir,
    jobs,
    principal: localPrincipal(scope),
    allowTraceQueries,
    refuseTool,
    log: (line) => io.err(`trace mcp: ${line}\n`),
  });
  // A line that cannot be read, or gives no valid id, is answered with a null id (JSON-RPC's rule).
  const answerUnread = (
    error: { code: number; message: string },
    id: string | number | null = null,
  ) => {
    stdio.send(
      { jsonrpc: "2.0", id, error } as unknown as JSONRPCMessage,
    ).catch(() => {});
  };
  const lines = process.stdin.pipe(strictStdinLines({
    onRefused: (refused) => {
      const refusal = refusedLine(refused);
      io.err(`trace mcp: ${refusal.log}\n`);
      answerUnread(refusal.error, refused.id);
    },
  }));
  const stdio = new StdioServerTransport(lines);
  server.server.onerror = (error: Error) => {
    const refusal = unreadableLine(error);
    io.err(
      `trace mcp: ${refusal?.log ?? errorMessage(error).split("\n")[0]}\n`,
    );
    if (refusal) answerUnread(refusal.error);
  };
  try {
    const closed = stdinClosed(lines, server);
    await server.connect(guardToolCalls(stdio, calls));
    io.err(
      `trace mcp: ${
        toolsFor({ allowTraceQueries, refuseTool }).length
      } tools on stdio (data: ${terminalSafe(dbLocation(db))}); trace queries ${
        allowTraceQueries ? `on, scope: ${describeScope(scope)}` : "off"
      }${
        readOnly
          ? "; read-only: every tool that writes is refused (TRACE_UI_READ_ONLY=true)"
          : ""
      }\n`,
    );
    if (Deno.stdin.isTerminal()) {
      io.err(
        "trace mcp: this speaks MCP on stdin/stdout for an assistant; trace mcp-config prints client configurations\n",
      );
    }
    await Promise.race([closed, untilInterrupted(io)]);
    if (calls.running > 0 && !io.interrupted?.aborted) {
      io.err(
        `trace mcp: stdin closed; finishing ${calls.running} tool call(s) in progress before exiting (Ctrl-C stops at once)\n`,
      );
      await Promise.race([calls.idle(), untilInterrupted(io)]);
    }
  } finally {
    await closeJobs(jobs, io);
    await server.close();
    db.close();
  }
  return 0;
};

/**
 * Cancels the run still running, if one is: its window ends early, so it
 * completes INCONCLUSIVE, and its cleanup runs before the process exits
 * (a client that closes stdin kills the server soon after; a run left to
 * finish its window would be killed before its cleanup). Stderr says so,
 * with the outcome, since nobody is left to ask `trace.external_get`.
 */
async function closeJobs(
  jobs: RunJobs,
  io: CliIo,
): Promise<void> {
  const runId = jobs.active;
  const cancelled = runId !== null && jobs.cancel(runId);
  if (cancelled) {
    io.err(
      `trace mcp: ${
        io.interrupted?.aborted ? "interrupted" : "stdin closed"
      } while run ${runId} was running: it is cancelled and cleans up before exiting\n`,
    );
  }
  await jobs.close();
  if (!cancelled) return;
  // The outcome is a courtesy: failing to read it must not keep the server open.
  const view = await jobs.get(runId).catch(() => null);
  if (view === null) {
    io.err(`trace mcp: trace external-show ${runId} shows how it ended\n`);
    return;
  }
  const cleanup = view.report?.cleanup;
  io.err(
    `trace mcp: run ${runId} ended ${view.verdict ?? view.state}; ${
      cleanup === undefined
        ? "its cleanup is not on record"
        : cleanup.cleanup_complete
        ? "cleanup complete"
        : `cleanup incomplete: run trace external-cleanup ${runId}`
    } (trace external-show ${runId})\n`,
  );
}
