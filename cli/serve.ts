/** `trace serve`: the ingest and query API on localhost. */

import { isLoopbackHost } from "../lib/contract/config.ts";
import { ConfigError, UsageError } from "../lib/errors.ts";
import { createApp } from "../routes/app.ts";
import { DATA_FLAGS, parseFlags, showHelp } from "./_args.ts";
import { openDataContext } from "./_context.ts";
import type { Command } from "./_io.ts";

const FLAGS = {
  ...DATA_FLAGS,
  host: { type: "string", default: "127.0.0.1" },
  port: { type: "string", default: "8788" },
  "default-application": { type: "string" },
} as const;

const HELP =
  `Usage: trace serve [--host 127.0.0.1] [--port 8788] [--data-dir DIR] [--db URL]

Serves the observability API: POST/GET /api/events, GET /api/events/summary
and OTLP/HTTP traces at POST /v1/traces (JSON or protobuf, gzip accepted).

On a loopback address with no TRACE_INGEST_TOKEN, requests need no
credentials, so an unmodified OpenTelemetry exporter works as is. With
TRACE_INGEST_TOKEN set, every API request needs Authorization: Bearer TOKEN.
A non-loopback --host is refused unless TRACE_INGEST_TOKEN is set.

Options:
  --default-application ID   Tenant for OTLP spans without tenant.id / application.id
`;

/** `trace serve`: listen until interrupted. */
export const serve: Command = async (args, io) => {
  const { values } = parseFlags("serve", args, FLAGS);
  if (values.help) return showHelp(io, HELP);
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new UsageError(
      `serve: --port must be an integer from 0 to 65535, got "${values.port}"`,
    );
  }
  const token = io.env("TRACE_INGEST_TOKEN") || undefined;
  if (token !== undefined && token.length < 16) {
    throw new ConfigError(
      "TRACE_INGEST_TOKEN must be at least 16 characters; generate a long random secret",
    );
  }
  const loopback = isLoopbackHost(values.host);
  if (!loopback && token === undefined) {
    throw new ConfigError(
      `Refusing to serve on non-loopback host ${values.host} without TRACE_INGEST_TOKEN; set it or use --host 127.0.0.1`,
    );
  }
  const { db, dataDir } = await openDataContext(values, io, { write: true });
  const app = createApp({
    db,
    ingestToken: token,
    loopbackBind: loopback,
    ...(values["default-application"]
      ? { defaultApplicationId: values["default-application"] }
      : {}),
  });
  const stopped = Promise.withResolvers<void>();
  const server = Deno.serve({
    hostname: values.host,
    port,
    onListen: ({ hostname, port }) => {
      const shown = hostname.includes(":") ? `[${hostname}]` : hostname;
      io.err(
        `Trace server listening on http://${shown}:${port} (data: ${
          db.path ?? dataDir
        })\n`,
      );
      io.err(
        `  ingest auth: ${
          token ? "bearer token (TRACE_INGEST_TOKEN)" : "none, loopback only"
        }\n`,
      );
    },
  }, app.fetch);
  const stop = () => stopped.resolve();
  Deno.addSignalListener("SIGINT", stop);
  Deno.addSignalListener("SIGTERM", stop);
  await stopped.promise;
  Deno.removeSignalListener("SIGINT", stop);
  Deno.removeSignalListener("SIGTERM", stop);
  await server.shutdown();
  db.close();
  io.err("Trace server stopped\n");
  return 0;
};
