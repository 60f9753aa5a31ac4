/** `trace serve`: the ingest and query API on localhost. */

import { HealthMonitor } from "../lib/obs/maint/mod.ts";
import { createApp } from "../routes/app.ts";
import { serverSecurity } from "../routes/_guard.ts";
import {
  DEFAULT_SERVE_LIMITS,
  type GuardedServer,
  listenError,
  listenGuarded,
} from "../routes/listen.ts";
import { DEFAULT_BODY_LIMITS } from "../routes/_body.ts";
import {
  DATA_FLAGS,
  dbLocation,
  parseFlags,
  parseIntegerFlag,
  showHelp,
} from "./_args.ts";
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
gzip accepted). Provisions the database when missing. Storage failures are
answered generically; their detail is written to stderr.

On a loopback address with no TRACE_INGEST_TOKEN, requests need no
credentials, so an unmodified OpenTelemetry exporter works as is. With
TRACE_INGEST_TOKEN set, every API request needs Authorization: Bearer TOKEN.
A non-loopback --host is refused unless TRACE_INGEST_TOKEN is set.

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
  --default-application ID   Tenant for OTLP spans without tenant.id / application.id
`;

/** `trace serve`: listen until interrupted. */
export const serve: Command = async (args, io) => {
  const { values } = parseFlags("serve", args, FLAGS);
  if (values.help) return showHelp(io, HELP);
  const port = parseIntegerFlag("port", values.port, { min: 0, max: 65535 })!;
  const token = io.env("TRACE_INGEST_TOKEN") || undefined;
  // createApp enforces these rules too; checking first refuses before any file is touched.
  serverSecurity({ hostname: values.host, ingestToken: token });
  const { db } = await openDataContext(values, io, { write: true });
  const health = new HealthMonitor(db, { processCounters: true });
  const app = createApp({
    db,
    ingestToken: token,
    hostname: values.host,
    health,
    log: (line) => io.err(line + "\n"),
    requestLog: (line) => io.err(line + "\n"),
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
  // Link checks read every event: start them now, not on the first request.
  void health.report().catch(() => {});
  await untilInterrupted(io);
  await server.shutdown();
  await health.idle();
  db.close();
  io.err("Trace server stopped\n");
  return 0;
};
