/**
 * The staging adapter API over a {@link MemoryPipeline}: four POST operations
 * answered by `handleStagingRequest` (the pipeline's one adapter face), one-line
 * JSON errors, and request log lines that carry counts and namespaces but
 * never document or query text.
 *
 * @module
 */

import { Hono, type MiddlewareHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import {
  type Operation,
  OPERATIONS,
  StagingRequestError,
} from "../lib/contract/protocol.ts";
import {
  handleStagingRequest,
  MemoryFullError,
  type MemoryPipeline,
  type StagingExchange,
} from "../lib/memory/mod.ts";
import { isLoopbackHost } from "../lib/loopback.ts";
import { readAdapterJson } from "./_body.ts";
import {
  loopbackHostOnly,
  requireContentType,
  sameOriginOnly,
} from "./_guard.ts";

/** Options for {@link createStagingApp}. */
export interface StagingAppOptions {
  /** Receives one line per request (no trailing newline). */
  log?: (line: string) => void;
  /** The address the app is served on (default `127.0.0.1`): loopback enables the Host check. */
  hostname?: string;
}

/** What a request leaves for its log line: the namespace and how many ids it named. */
export type StagingAppEnv = {
  Variables: { namespace?: string; idCount?: number };
};

/** Builds the staging adapter app over `pipeline` (no listening; mount or serve it). */
export function createStagingApp(
  pipeline: MemoryPipeline,
  options: StagingAppOptions = {},
): Hono<StagingAppEnv> {
  const app = new Hono<StagingAppEnv>();
  const log = options.log;
  if (log) app.use(requestLog(log));
  // The same browser guards as the Trace server: a web page must not drive the demo.
  app.use(loopbackHostOnly(isLoopbackHost(options.hostname ?? "127.0.0.1")));
  app.use(sameOriginOnly());
  app.use(requireContentType());
  for (const op of OPERATIONS) {
    app.post(`/${op}`, async (c) => {
      const exchange = await handleStagingRequest(
        pipeline,
        op,
        await readAdapterJson(c.req.raw),
      );
      c.set("namespace", exchange.request.namespace);
      const idCount = idsOf(op, exchange);
      if (idCount !== undefined) c.set("idCount", idCount);
      return c.json(exchange.response);
    });
    app.all(
      `/${op}`,
      (c) =>
        c.json({ error: `method ${c.req.method} not allowed; use POST` }, 405, {
          Allow: "POST",
        }),
    );
  }
  app.notFound((c) =>
    c.json({
      error: `no such operation; use POST ${
        OPERATIONS.map((op) => `/${op}`).join(", ")
      }`,
    }, 404)
  );
  app.onError((error, c) => {
    if (error instanceof StagingRequestError) {
      return c.json({ error: error.message }, 400);
    }
    if (error instanceof MemoryFullError) {
      // 507 Insufficient Storage (RFC 4918): the request is fine, the server
      // cannot store it; 413 would tell the client to send a smaller body.
      return c.json({ error: error.message }, 507);
    }
    if (error instanceof HTTPException) {
      return c.json({ error: error.message }, error.status);
    }
    // Never echo internal messages: they could quote stored text.
    return c.json({ error: "internal error" }, 500);
  });
  return app;
}

/** How many ids a request carried, for the log line. */
function idsOf(op: Operation, exchange: StagingExchange): number | undefined {
  if (op === "ingest") return 1;
  return "ids" in exchange.request ? exchange.request.ids.length : undefined;
}

function requestLog(
  log: (line: string) => void,
): MiddlewareHandler<StagingAppEnv> {
  return async (c, next) => {
    const started = performance.now();
    await next();
    const ms = (performance.now() - started).toFixed(1);
    const parts = [
      c.req.method,
      safeToken(new URL(c.req.url).pathname),
      String(c.res.status),
      `${ms}ms`,
    ];
    const namespace = c.get("namespace");
    if (namespace !== undefined) {
      parts.push(`namespace=${safeToken(namespace)}`);
    }
    const idCount = c.get("idCount");
    if (idCount !== undefined) parts.push(`ids=${idCount}`);
    log(parts.join(" "));
  };
}

/** Plain identifiers as-is; anything else JSON-quoted and cut short, so a log line stays one line. */
function safeToken(value: string): string {
  if (/^[A-Za-z0-9_.:/-]{1,128}$/.test(value)) return value;
  return JSON.stringify(value.length > 64 ? `${value.slice(0, 64)}…` : value);
}
