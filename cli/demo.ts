/**
 * `trace demo`: serves the demo staging app, healthy or with one injected
 * defect, until interrupted. {@link startDemoServer} is the same server for
 * programmatic use (quickstart, tests).
 *
 * @module
 */

import { type Command, credentialFromEnv, untilInterrupted } from "./_io.ts";
import { parseFlags, parseIntegerFlag } from "./_args.ts";
import { isLoopbackHost } from "../lib/loopback.ts";
import {
  DEFAULT_DEFECT_DELAY_MS,
  DEFECTS,
  demoBehaviour,
  type DemoDefect,
  parseDefectFlag,
} from "../lib/demo/defects.ts";
import {
  createDemoTraceSink,
  type DemoTraceSink,
  httpEventWriter,
} from "../lib/demo/demo_tracing.ts";
import { MemoryPipeline } from "../lib/memory/mod.ts";
import { UsageError } from "../lib/errors.ts";
import { createStagingApp } from "../routes/staging.ts";
import { listenError } from "../routes/listen.ts";
import { quoteValue } from "../lib/echo.ts";

/** Options for {@link startDemoServer}. */
export interface DemoServerOptions {
  /** Interface to bind (default 127.0.0.1). */
  hostname?: string;
  /** Port to bind; 0 picks a free one (default 0). */
  port?: number;
  defect?: DemoDefect | null;
  /** Delay of timed defects in ms (default 800). */
  delayMs?: number;
  /** Receives request log lines. */
  log?: (line: string) => void;
  /** Where the pipeline's trace events go (in-process sink); flushed every second and on shutdown. */
  traceSink?: DemoTraceSink;
}

/** A running demo staging app. */
export interface DemoServer {
  /** Base URL to put in a staging config, without a trailing slash. */
  url: string;
  port: number;
  /** Stops listening and cancels the pipeline's background jobs; safe to call twice. */
  shutdown(): Promise<void>;
}

/** Starts the demo staging app on `hostname:port`. */
export function startDemoServer(
  options: DemoServerOptions = {},
): Promise<DemoServer> {
  const hostname = options.hostname ?? "127.0.0.1";
  const sink = options.traceSink;
  const pipeline = new MemoryPipeline(
    demoBehaviour(options.defect ?? null, options.delayMs),
    sink ? { onActivity: (activity) => sink.record(activity) } : {},
  );
  const app = createStagingApp(pipeline, {
    hostname,
    ...(options.log ? { log: options.log } : {}),
  });
  let server: Deno.HttpServer<Deno.NetAddr>;
  try {
    server = Deno.serve({
      hostname,
      port: options.port ?? 0,
      onListen: () => {},
    }, app.fetch);
  } catch (error) {
    pipeline.close();
    // The same words as trace serve for a port in use, a denied or foreign address.
    const port = options.port ?? 0;
    const known = listenError(error, hostname, port);
    return Promise.reject(
      known !== error ? known : new UsageError(
        `Cannot listen on ${hostname}:${port}: ${
          (error as Error).message
        }; choose another --host or --port`,
        { cause: error },
      ),
    );
  }
  // The bound address, as trace serve shows it: `--host [::1]` must not print `[[::1]]`.
  const { hostname: bound, port } = server.addr;
  const flusher = sink ? setInterval(() => void sink.flush(), 1000) : undefined;
  const stop = async () => {
    try {
      await server.shutdown();
    } finally {
      pipeline.close();
      clearInterval(flusher);
      await sink?.flush();
    }
  };
  let stopped: Promise<void> | undefined;
  return Promise.resolve({
    url: `http://${bound.includes(":") ? `[${bound}]` : bound}:${port}`,
    port,
    shutdown: () => stopped ??= stop(),
  });
}

const FLAGS = {
  host: { type: "string", default: "127.0.0.1" },
  port: { type: "string", default: "8787" },
  defect: { type: "string" },
  "defect-delay-ms": { type: "string" },
  "trace-to": { type: "string" },
  quiet: { type: "boolean", default: false },
  help: { type: "boolean", short: "h", default: false },
} as const;

const USAGE =
  `Usage: trace demo [--host 127.0.0.1] [--port 8787] [--defect NAME] [--defect-delay-ms N] [--trace-to URL] [--quiet]

Serves the demo staging app (an in-memory RAG memory service) until Ctrl-C.
Data lives in memory only: restarting clears it.

Options:
  --host HOST            Interface to bind (default 127.0.0.1; others print a warning)
  --port N               Port to bind, 0 for any free port (default 8787)
  --defect NAME          Inject a deletion defect: ${DEFECTS.join(", ")}
                         (none, the default: a healthy app)
  --defect-delay-ms N    Delay in ms of slow-vector's vector deletion and of the
                         repair re-index every app runs after a deletion, which
                         vector-resurrect reads stale (default ${DEFAULT_DEFECT_DELAY_MS})
  --trace-to URL         Post the service's trace events (ingest, query selections
                         naming the cache entry or vectors behind each answer,
                         deletions; never text) to a Trace server: its base URL
                         (http://127.0.0.1:8788) or its /api/events endpoint. Sends
                         Authorization: Bearer $TRACE_INGEST_TOKEN when that is set
  --quiet                Do not print request log lines
`;

/** `trace demo`: serve the demo staging app until SIGINT or SIGTERM. */
export const demo: Command = async (args, io) => {
  const { values } = parseFlags("demo", args, FLAGS);
  if (values.help) {
    io.out(USAGE);
    return 0;
  }
  const port = parseIntegerFlag("port", values.port, { min: 0, max: 65535 })!;
  const delayMs = values["defect-delay-ms"] === undefined
    ? DEFAULT_DEFECT_DELAY_MS
    : parseIntegerFlag("defect-delay-ms", values["defect-delay-ms"], {
      min: 0,
      max: 600_000,
      unit: "milliseconds",
    })!;
  const defect = parseDefectFlag(values.defect, "demo");
  if (!isLoopbackHost(values.host)) {
    io.err(
      `Warning: --host ${values.host} is not a loopback address; the demo has no authentication, ` +
        "so anyone who can reach this port can read and delete its data\n",
    );
  }
  // Read only for --trace-to: the token is sent nowhere else.
  const token = values["trace-to"] === undefined
    ? undefined
    : credentialFromEnv(
      io,
      "TRACE_INGEST_TOKEN",
      "to send trace events without a bearer token",
    );
  const traceSink = values["trace-to"] === undefined
    ? undefined
    : createDemoTraceSink(
      httpEventWriter(parseTraceUrl(values["trace-to"]), {
        headers: token ? { Authorization: `Bearer ${token}` } : {},
      }),
      { onError: (message) => io.err(`${message}\n`) },
    );
  const server = await startDemoServer({
    hostname: values.host,
    port,
    defect,
    delayMs,
    ...(traceSink ? { traceSink } : {}),
    ...(values.quiet ? {} : { log: (line: string) => io.err(`${line}\n`) }),
  });
  io.err(
    `Demo staging app (defect: ${defect ?? "none"}) listening on ${server.url}${
      traceSink ? `; trace events go to ${values["trace-to"]}` : ""
    }\n`,
  );
  await untilInterrupted(io);
  await server.shutdown();
  io.err("Demo staging app stopped; its in-memory data is gone\n");
  return 0;
};

/** A Trace server URL: https anywhere, plain http only on loopback. */
function parseTraceUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(
      `--trace-to must be an absolute URL such as http://127.0.0.1:8080, got ${
        quoteValue(text)
      }`,
    );
  }
  const plainLoopback = url.protocol === "http:" &&
    isLoopbackHost(url.hostname);
  if (url.protocol !== "https:" && !plainLoopback) {
    throw new UsageError(
      `--trace-to must use https://, or http:// on a loopback host, got ${
        quoteValue(text)
      }`,
    );
  }
  if (url.username || url.password || url.search || url.hash) {
    throw new UsageError(
      "--trace-to must not contain credentials, a query or a fragment",
    );
  }
  return url.href;
}
