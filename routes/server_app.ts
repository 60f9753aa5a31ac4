/**
 * The server apps as the library hands them out: a fetch handler and
 * `request`, without Hono's types, so the library surface does not change
 * with the framework's. Inside Trace, `routes/app.ts` and `routes/staging.ts`
 * return the Hono apps themselves.
 *
 * @module
 */

import type { MemoryPipeline } from "../lib/memory/mod.ts";
import { type AppOptions, createApp as createHonoApp } from "./app.ts";
import {
  createStagingApp as createHonoStagingApp,
  type StagingAppOptions,
} from "./staging.ts";

/** A server app that does not listen: serve it with `Deno.serve(app.fetch)`, or ask it directly. */
export interface ServerApp {
  /** Answers one request; pass it to `Deno.serve` or to a host's router. */
  fetch: (request: Request) => Response | Promise<Response>;
  /** Answers a request built from a URL (or path) and `init`, with no socket: for tests and scripts. */
  request: (
    input: Request | string | URL,
    init?: RequestInit,
  ) => Response | Promise<Response>;
}

/**
 * Builds the Trace server app (API, OTLP, trace UI, MCP when asked) with its
 * security rules; throws a `ConfigError` when the options would make an
 * unsafe server (a non-loopback address without a token, a bad account).
 */
export function createApp(options: AppOptions): ServerApp {
  return createHonoApp(options);
}

/** Builds the staging adapter app over `pipeline`: the four operations of the contract, loopback guards, one log line per request. */
export function createStagingApp(
  pipeline: MemoryPipeline,
  options: StagingAppOptions = {},
): ServerApp {
  return createHonoStagingApp(pipeline, options);
}
