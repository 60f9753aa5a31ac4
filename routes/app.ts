/**
 * The Trace server app: the observability ingest and query API, OTLP/HTTP
 * trace ingest, and liveness. `createApp` returns a Hono app without
 * listening; `trace serve` listens.
 *
 * @module
 */

import { Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import type { TraceDb } from "../lib/db.ts";
import { errorMessage, TraceError } from "../lib/errors.ts";
import { STATUS_BY_CODE } from "./_errors.ts";
import { requireBearer, sameOriginOnly } from "./_guard.ts";
import { createEventsApi } from "./events.ts";
import { createOtlpApi } from "./otlp.ts";

/** Options for {@link createApp}. */
export interface AppOptions {
  db: TraceDb;
  /** Bearer token required by `/api/*` and `/v1/*`; none means open (loopback only). */
  ingestToken?: string | undefined;
  /** Whether the server is bound to a loopback address (enables the Host check). */
  loopbackBind?: boolean;
  /** Tenant used for OTLP spans that name none. */
  defaultApplicationId?: string;
  /** Version string reported by `/api`. */
  version?: string;
}

/** Builds the server app. */
export function createApp(options: AppOptions): Hono {
  const app = new Hono();
  app.use("*", sameOriginOnly({ loopbackBind: options.loopbackBind ?? true }));
  app.use("/api/*", requireBearer(options.ingestToken));
  app.use("/v1/*", requireBearer(options.ingestToken));

  app.get("/healthz", (c) => c.json({ status: "ok" }));
  app.get("/api", (c) =>
    c.json({
      name: "trace",
      version: options.version ?? "0.1.0",
      endpoints: [
        "POST /api/events (JSON array, object or NDJSON; gzip accepted)",
        "GET /api/events (scoped query with cursor)",
        "GET /api/events/summary",
        "POST /v1/traces (OTLP/HTTP, JSON or protobuf)",
      ],
      auth: options.ingestToken ? "bearer" : "none (loopback only)",
    }));
  app.route("/", createEventsApi({ db: options.db }));
  app.route(
    "/",
    createOtlpApi({
      db: options.db,
      ...(options.defaultApplicationId
        ? { defaultApplicationId: options.defaultApplicationId }
        : {}),
    }),
  );
  app.notFound((c) =>
    c.json({
      error: {
        code: "not_found",
        message: `No route for ${c.req.method} ${c.req.path}`,
      },
    }, 404)
  );
  app.onError((error, c) => {
    if (error instanceof HTTPException) {
      return c.json(
        { error: { code: "http", message: error.message } },
        error.status,
      );
    }
    if (error instanceof TraceError) {
      return c.json({
        error: { code: error.code, message: errorMessage(error) },
      }, STATUS_BY_CODE[error.code]);
    }
    // Unknown errors never leak a stack or an internal message.
    return c.json({
      error: { code: "internal", message: "Internal server error" },
    }, 500);
  });
  return app;
}
