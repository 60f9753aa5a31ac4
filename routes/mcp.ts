/**
 * `/mcp`: the MCP tools over the SDK's streamable HTTP transport. Mount
 * inside {@link createApp} (`routes/app.ts`), whose Host and origin guards
 * run first; this sub-app then requires a principal ({@link mcpPrincipal}:
 * the bearer token of `TRACE_UI_AUTH_TOKEN` or of an operator account) and
 * answers the request with a server built for that principal. The role
 * matrix decides which tools it is offered (`toolRefusal` of `lib/mcp/tool_policy.ts`): a
 * tenant-bound account gets the trace tool only, bound to its scope; runs
 * and ledger writes need the operator role; read-only mode refuses them.
 *
 * Stateless: every POST gets a fresh server and transport (no
 * `Mcp-Session-Id`), with JSON answers instead of event streams. Nothing an
 * assistant needs lives in a session: runs live in the process's job
 * manager and are polled by run id, so any request may poll any run, a
 * restart loses no session, and no stream is left open. GET (a
 * server-to-client stream) and DELETE (ending a session) are answered 405.
 *
 * @module
 */

import { type Context, Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import {
  createOperatorDirectory,
  type OperatorDirectory,
} from "../lib/auth/mod.ts";
import type { TraceDb } from "../lib/db.ts";
import {
  createTraceMcpServer,
  guardToolCalls,
  MCP_MAX_MESSAGE_BYTES,
  type McpPrincipal,
  type McpToolContext,
  toolRefusal,
} from "../lib/mcp/mod.ts";
import type { RunJobs } from "../lib/runs/mod.ts";
import { checkToken } from "./_guard.ts";
import { readMcpBody } from "./_mcp_body.ts";
import { methodNotAllowed, type ServerLog } from "./_errors.ts";

/** What `/mcp` needs besides the database. */
export interface McpRouteOptions {
  /** The data directory of the runs' checkpoints. */
  dataDir: string;
  /** The process's job manager, shared with every other entry point that starts runs. */
  jobs: RunJobs;
  /**
   * `TRACE_UI_AUTH_TOKEN`, the admin bearer token (`createApp` takes it as
   * `uiAuthToken`); without it or an operator account `/mcp` refuses every
   * request.
   */
  authToken?: string | undefined;
  /** Whether `trace.query_traces` is offered. */
  allowTraceQueries?: boolean;
  /** Bound of one tool answer, in characters of JSON. */
  maxOutputChars?: number;
}

/** Dependencies of {@link createMcpApi}. */
export interface McpApiDeps extends McpRouteOptions {
  db: TraceDb;
  log?: ServerLog;
  /** The app's operator directory (default: the admin token alone). */
  directory?: OperatorDirectory;
  /** `TRACE_UI_READ_ONLY=true`: tools that write are refused. */
  readOnly?: boolean;
}

function unauthorized(c: Context, message: string): never {
  c.header("WWW-Authenticate", 'Bearer realm="trace"');
  throw new HTTPException(401, { message });
}

/**
 * The principal of a `/mcp` request: the holder of an operator token (the
 * admin token, unscoped, or an account's, with its role and scope). Every
 * other request is refused with 401. This is the one place that decides who
 * calls `/mcp`.
 */
export async function mcpPrincipal(
  c: Context,
  directory: OperatorDirectory,
): Promise<McpPrincipal> {
  if (!directory.hasTokens()) {
    unauthorized(
      c,
      "/mcp needs authentication and none is configured; set TRACE_UI_AUTH_TOKEN (16+ characters) or TRACE_UI_AUTH_ACCOUNTS for trace serve and send Authorization: Bearer <token>",
    );
  }
  const header = c.req.header("authorization") ?? "";
  const given = /^Bearer /i.test(header) ? header.slice(7) : "";
  const account = given ? await directory.byToken(given) : null;
  if (!account) {
    unauthorized(
      c,
      "Missing or wrong bearer token; send Authorization: Bearer with TRACE_UI_AUTH_TOKEN or your operator token",
    );
  }
  return { name: account.name, role: account.role, scope: account.scope };
}

/** The `/mcp` sub-app; throws a `ConfigError` for a malformed token. */
export function createMcpApi(deps: McpApiDeps): Hono {
  if (deps.authToken !== undefined) {
    checkToken(deps.authToken, "TRACE_UI_AUTH_TOKEN");
  }
  const directory = deps.directory ??
    createOperatorDirectory({ adminToken: deps.authToken });
  const readOnly = deps.readOnly ?? false;
  const app = new Hono();
  app.all("/mcp", async (c) => {
    const principal = await mcpPrincipal(c, directory);
    const refuseTool: McpToolContext["refuseTool"] = (tool) =>
      toolRefusal({ ...principal, via: "bearer" }, tool, { readOnly });
    // Stateless: no server-to-client stream to open (GET), no session to end (DELETE).
    if (c.req.method !== "POST") methodNotAllowed(c, ["POST"]);
    const read = await readMcpBody(c.req.raw, MCP_MAX_MESSAGE_BYTES);
    if (read instanceof Response) return read;
    const server = createTraceMcpServer({
      db: deps.db,
      dataDir: deps.dataDir,
      jobs: deps.jobs,
      principal,
      refuseTool,
      remote: true,
      allowTraceQueries: deps.allowTraceQueries ?? false,
      ...(deps.maxOutputChars === undefined
        ? {}
        : { maxOutputChars: deps.maxOutputChars }),
      ...(deps.log ? { log: deps.log } : {}),
    });
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
      maxRequestBodySize: MCP_MAX_MESSAGE_BYTES,
    });
    await server.connect(guardToolCalls(transport));
    try {
      return await transport.handleRequest(
        c.req.raw,
        read ? { parsedBody: read.body } : {},
      );
    } finally {
      await server.close();
    }
  });
  return app;
}
