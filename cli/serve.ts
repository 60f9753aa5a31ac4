/** `trace serve`: the ingest and query API and the trace UI on localhost. */

import { dbLocation } from "../lib/db.ts";
import { ConfigError } from "../lib/errors.ts";
import { TRACE_QUERIES_ENV, traceQueriesAllowed } from "../lib/mcp/mod.ts";
import { RunJobs } from "../lib/runs/mod.ts";
import { createApp } from "../routes/app.ts";
import { serverSecurity } from "../routes/_guard.ts";
import { checkUiAuthOptions } from "../routes/_ui_auth.ts";
import { isLoopbackHost } from "../lib/loopback.ts";
import {
  createOneTimeLogin,
  type OneTimeLogin,
} from "../routes/one_time_login.ts";
import { DATA_FLAGS, parseFlags, parseIntegerFlag, showHelp } from "./_args.ts";
import { openDataContext } from "./_context.ts";
import { type Command, untilInterrupted } from "./_io.ts";

const FLAGS = {
  ...DATA_FLAGS,
  host: { type: "string", default: "127.0.0.1" },
  port: { type: "string", default: "8788" },
  "default-application": { type: "string" },
} as const;

const HELP =
  `Usage: trace serve [--host 127.0.0.1] [--port 8788] [--data-dir DIR] [--db URL]

Serves the observability API: POST/GET /api/events, GET /api/events/summary,
GET /api/health and OTLP/HTTP traces at POST /v1/traces (JSON or protobuf,
gzip accepted), and the trace UI (pages such as /traces/health, each with a
.json twin). Provisions the database when missing. Storage failures are
answered generically; their detail is written to stderr.

The UI: on a loopback address the server prints a one-time login URL on
stderr; opening it signs that browser in (the link then stops working;
restart the server for a new one). TRACE_UI_AUTH_TOKEN (at least 16
characters, no whitespace) is an administrator token: scripts send it as
Authorization: Bearer TOKEN to any page or .json twin, and people can sign
in with it at /login as often as they need. Beyond loopback the UI needs
TRACE_UI_AUTH_TOKEN.

On a loopback address with no TRACE_INGEST_TOKEN, requests need no
credentials, so an unmodified OpenTelemetry exporter works as is. With
TRACE_INGEST_TOKEN set, every API request needs Authorization: Bearer TOKEN.
A non-loopback --host is refused unless TRACE_INGEST_TOKEN is set.

MCP over streamable HTTP at /mcp needs Authorization: Bearer
$TRACE_UI_AUTH_TOKEN (refused while it is unset); trace.query_traces is
offered when TRACE_MCP_ALLOW_TRACE_QUERIES=true.

Options:
  --default-application ID   Tenant for OTLP spans without tenant.id / application.id
`;

/** Says why the server could not listen, and what to change. */
function listenError(error: unknown, host: string, port: number): unknown {
  const where = `${host.includes(":") ? `[${host}]` : host}:${port}`;
  if (error instanceof Deno.errors.AddrInUse) {
    return new ConfigError(
      `Cannot listen on ${where}: the port is in use; choose another --port`,
      { cause: error },
    );
  }
  if (error instanceof Deno.errors.PermissionDenied) {
    return new ConfigError(
      `Cannot listen on ${where}: permission denied; choose a --port above 1023`,
      { cause: error },
    );
  }
  if (error instanceof Deno.errors.AddrNotAvailable) {
    return new ConfigError(
      `Cannot listen on ${where}: the address is not on this machine; check --host`,
      { cause: error },
    );
  }
  return error;
}

/** What the start-up lines say about signing in to the UI. */
function uiStartupLines(
  origin: string,
  login: OneTimeLogin | undefined,
  adminToken: string | undefined,
): string {
  const lines = [];
  if (login) {
    lines.push(`  UI login (works once): ${login.url(origin)}`);
  } else if (!adminToken) {
    lines.push(
      "  UI: sign-in is off beyond loopback without TRACE_UI_AUTH_TOKEN",
    );
  }
  lines.push(
    adminToken
      ? "  UI admin token: TRACE_UI_AUTH_TOKEN (Authorization: Bearer, or sign in at /login)"
      : "  UI admin token: none; set TRACE_UI_AUTH_TOKEN for scripts (Authorization: Bearer) and repeat sign-ins",
  );
  return lines.map((line) => line + "\n").join("");
}

/** `trace serve`: listen until interrupted. */
export const serve: Command = async (args, io) => {
  const { values } = parseFlags("serve", args, FLAGS);
  if (values.help) return showHelp(io, HELP);
  const port = parseIntegerFlag("port", values.port, { min: 0, max: 65535 })!;
  const token = io.env("TRACE_INGEST_TOKEN") || undefined;
  const uiAuthToken = io.env("TRACE_UI_AUTH_TOKEN") || undefined;
  // No operator accounts yet: a loopback server signs people in with a one-time URL.
  const oneTimeLogin = isLoopbackHost(values.host)
    ? createOneTimeLogin()
    : undefined;
  // createApp enforces these rules too; checking first refuses before any file is touched.
  serverSecurity({ hostname: values.host, ingestToken: token });
  checkUiAuthOptions({
    hostname: values.host,
    ingestToken: token,
    uiAuthToken,
    oneTimeLogin,
  });
  const allowTraceQueries = traceQueriesAllowed(io.env(TRACE_QUERIES_ENV));
  const { db, dataDir } = await openDataContext(values, io, { write: true });
  const jobs = new RunJobs({ db, dataDir, env: io.env });
  const app = createApp({
    db,
    ingestToken: token,
    hostname: values.host,
    uiAuthToken,
    oneTimeLogin,
    log: (line) => io.err(line + "\n"),
    mcp: { dataDir, jobs, authToken: uiAuthToken, allowTraceQueries },
    // The same job manager as MCP's: one external run at a time for both.
    runs: { dataDir, jobs },
    ...(values["default-application"]
      ? { defaultApplicationId: values["default-application"] }
      : {}),
  });
  let server: Deno.HttpServer;
  try {
    server = Deno.serve({
      hostname: values.host,
      port,
      onListen: ({ hostname, port }) => {
        const shown = hostname.includes(":") ? `[${hostname}]` : hostname;
        io.err(
          `Trace server listening on http://${shown}:${port} (data: ${
            dbLocation(db)
          })\n`,
        );
        io.err(
          `  ingest auth: ${
            token ? "bearer token (TRACE_INGEST_TOKEN)" : "none, loopback only"
          }\n`,
        );
        io.err(
          uiStartupLines(`http://${shown}:${port}`, oneTimeLogin, uiAuthToken),
        );
        io.err(
          `  mcp: /mcp ${
            uiAuthToken
              ? "with bearer token (TRACE_UI_AUTH_TOKEN)"
              : "refuses every request until TRACE_UI_AUTH_TOKEN is set"
          }\n`,
        );
      },
    }, app.fetch);
  } catch (error) {
    db.close();
    throw listenError(error, values.host, port);
  }
  await untilInterrupted(io);
  await server.shutdown();
  await jobs.close();
  db.close();
  io.err("Trace server stopped\n");
  return 0;
};
