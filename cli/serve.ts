/** `trace serve`: the ingest and query API on localhost. */

import { dbLocation } from "../lib/db.ts";
import { ConfigError } from "../lib/errors.ts";
import { createApp } from "../routes/app.ts";
import { serverSecurity } from "../routes/_guard.ts";
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
gzip accepted). Provisions the database when missing. Storage failures are
answered generically; their detail is written to stderr.

On a loopback address with no TRACE_INGEST_TOKEN, requests need no
credentials, so an unmodified OpenTelemetry exporter works as is. With
TRACE_INGEST_TOKEN set, every API request needs Authorization: Bearer TOKEN.
A non-loopback --host is refused unless TRACE_INGEST_TOKEN is set.

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

/** `trace serve`: listen until interrupted. */
export const serve: Command = async (args, io) => {
  const { values } = parseFlags("serve", args, FLAGS);
  if (values.help) return showHelp(io, HELP);
  const port = parseIntegerFlag("port", values.port, { min: 0, max: 65535 })!;
  const token = io.env("TRACE_INGEST_TOKEN") || undefined;
  // createApp enforces these rules too; checking first refuses before any file is touched.
  serverSecurity({ hostname: values.host, ingestToken: token });
  const { db } = await openDataContext(values, io, { write: true });
  const app = createApp({
    db,
    ingestToken: token,
    hostname: values.host,
    log: (line) => io.err(line + "\n"),
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
      },
    }, app.fetch);
  } catch (error) {
    db.close();
    throw listenError(error, values.host, port);
  }
  await untilInterrupted(io);
  await server.shutdown();
  await closeWriting(db, io);
  io.err("Trace server stopped\n");
  return 0;
};
