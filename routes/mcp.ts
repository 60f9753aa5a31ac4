/**
 * `/mcp`: the MCP tools over the SDK's streamable HTTP transport. Mount
 * inside {@link createApp} (`routes/app.ts`), whose Host and origin guards
 * run first; this sub-app then requires a principal ({@link mcpPrincipal})
 * and answers the request with a server built for that principal.
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
import { timingSafeEqual } from "hono/utils/buffer";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { TraceDb } from "../lib/db.ts";
import { createTraceMcpServer, type McpPrincipal } from "../lib/mcp/mod.ts";
import type { RunJobs } from "../lib/runs/mod.ts";
import { checkToken } from "./_guard.ts";
import { methodNotAllowed, type ServerLog } from "./_errors.ts";

/** Largest JSON-RPC request body accepted. */
export const MCP_MAX_BODY_BYTES = 1024 * 1024;

/** What `/mcp` needs besides the database. */
export interface McpRouteOptions {
  /** The data directory of the runs' checkpoints. */
  dataDir: string;
  /** The process's job manager, shared with every other entry point that starts runs. */
  jobs: RunJobs;
  /** `TRACE_UI_AUTH_TOKEN`: the admin bearer token; without it `/mcp` refuses every request. */
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
}

function unauthorized(c: Context, message: string): never {
  c.header("WWW-Authenticate", 'Bearer realm="trace"');
  throw new HTTPException(401, { message });
}

/**
 * The principal of a `/mcp` request: the holder of `TRACE_UI_AUTH_TOKEN`
 * is the admin, unscoped. Every other request is refused with 401. This is
 * the one place that decides who calls `/mcp`; operator accounts and
 * sessions plug in here.
 */
export async function mcpPrincipal(
  c: Context,
  authToken: string | undefined,
): Promise<McpPrincipal> {
  if (authToken === undefined) {
    unauthorized(
      c,
      "/mcp needs authentication and none is configured; set TRACE_UI_AUTH_TOKEN (16+ characters) for trace serve and send Authorization: Bearer <token>",
    );
  }
  const header = c.req.header("authorization") ?? "";
  const given = /^Bearer /i.test(header) ? header.slice(7) : "";
  if (!(await timingSafeEqual(given, authToken))) {
    unauthorized(
      c,
      "Missing or wrong bearer token; send Authorization: Bearer $TRACE_UI_AUTH_TOKEN",
    );
  }
  return { name: "admin", role: "admin", scope: {} };
}

/** The `/mcp` sub-app; throws a `ConfigError` for a malformed token. */
export function createMcpApi(deps: McpApiDeps): Hono {
  if (deps.authToken !== undefined) {
    checkToken(deps.authToken, "TRACE_UI_AUTH_TOKEN");
  }
  const app = new Hono();
  app.all("/mcp", async (c) => {
    const principal = await mcpPrincipal(c, deps.authToken);
    // Stateless: no server-to-client stream to open (GET), no session to end (DELETE).
    if (c.req.method !== "POST") methodNotAllowed(c, ["POST"]);
    const server = createTraceMcpServer({
      db: deps.db,
      dataDir: deps.dataDir,
      jobs: deps.jobs,
      principal,
      allowTraceQueries: deps.allowTraceQueries ?? false,
      ...(deps.maxOutputChars === undefined
        ? {}
        : { maxOutputChars: deps.maxOutputChars }),
      ...(deps.log ? { log: deps.log } : {}),
    });
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
      maxRequestBodySize: MCP_MAX_BODY_BYTES,
    });
    await server.connect(transport);
    try {
      return await transport.handleRequest(c.req.raw);
    } finally {
      await server.close();
    }
  });
  return app;
}
