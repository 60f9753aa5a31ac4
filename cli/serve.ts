/** `trace serve`: the ingest and query API and the trace UI on localhost. */

import { dbLocation } from "../lib/db.ts";
import { TRACE_QUERIES_ENV, traceQueriesAllowed } from "../lib/mcp/mod.ts";
import { HealthMonitor } from "../lib/obs/maint/mod.ts";
import { RunJobs } from "../lib/runs/mod.ts";
import { createApp } from "../routes/app.ts";
import { serverSecurity } from "../routes/_guard.ts";
import { checkUiAuthOptions } from "../routes/_ui_auth.ts";
import { isLoopbackHost } from "../lib/loopback.ts";
import {
  createOneTimeLogin,
  type OneTimeLogin,
} from "../routes/one_time_login.ts";
import {
  DEFAULT_SERVE_LIMITS,
  type GuardedServer,
  listenError,
  listenGuarded,
} from "../routes/listen.ts";
import { DEFAULT_BODY_LIMITS } from "../routes/_body.ts";
import { DATA_FLAGS, parseFlags, parseIntegerFlag, showHelp } from "./_args.ts";
import { closeWriting, openDataContext } from "./_context.ts";
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

Logs one line per request on stderr (method, route, status, duration, items,
refusal reason; never ids or content).

Limits: ${DEFAULT_SERVE_LIMITS.maxConnections} open connections; a request head
within ${DEFAULT_SERVE_LIMITS.headerTimeoutMs / 1000} s and ${
    DEFAULT_SERVE_LIMITS.maxHeadBytes / 1024
  } KiB; a body within ${(DEFAULT_BODY_LIMITS.timeoutMs ?? 0) / 1000} s, ${
    DEFAULT_BODY_LIMITS.maxBytes / 2 ** 20
  } MiB on the wire and ${
    DEFAULT_BODY_LIMITS.maxDecodedBytes / 2 ** 20
  } MiB inflated; ${
    DEFAULT_SERVE_LIMITS.requestTimeoutMs / 1000
  } s per request in all.

Options:
  --default-application ID   Tenant for OTLP spans that name none (tenant.id or
                             application.id); without it, the resource's
                             service.name. Answers say which was used.
`;

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
  const health = new HealthMonitor(db, { processCounters: true });
  const app = createApp({
    db,
    ingestToken: token,
    hostname: values.host,
    uiAuthToken,
    oneTimeLogin,
    health,
    log: (line) => io.err(line + "\n"),
    requestLog: (line) => io.err(line + "\n"),
    mcp: { dataDir, jobs, authToken: uiAuthToken, allowTraceQueries },
    ...(values["default-application"]
      ? { defaultApplicationId: values["default-application"] }
      : {}),
  });
  let server: GuardedServer;
  try {
    server = await listenGuarded(app.fetch, { hostname: values.host, port });
  } catch (error) {
    db.close();
    throw listenError(error, values.host, port);
  }
  const { hostname, port: bound } = server.addr;
  const shown = hostname.includes(":") ? `[${hostname}]` : hostname;
  io.err(
    `Trace server listening on http://${shown}:${bound} (data: ${
      dbLocation(db)
    })\n`,
  );
  io.err(
    `  ingest auth: ${
      token ? "bearer token (TRACE_INGEST_TOKEN)" : "none, loopback only"
    }\n`,
  );
  io.err(uiStartupLines(`http://${shown}:${bound}`, oneTimeLogin, uiAuthToken));
  io.err(
    `  mcp: /mcp ${
      uiAuthToken
        ? "with bearer token (TRACE_UI_AUTH_TOKEN)"
        : "refuses every request until TRACE_UI_AUTH_TOKEN is set"
    }\n`,
  );
  // Link checks read every event: start them now, not on the first request.
  void health.report().catch(() => {});
  await untilInterrupted(io);
  await server.shutdown();
  await health.idle();
  await jobs.close();
  await closeWriting(db, io);
  io.err("Trace server stopped\n");
  return 0;
};
