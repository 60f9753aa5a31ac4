/**
 * How the runner reaches a reference system: directly in-process (bodies
 * copied through JSON as on the wire, latency charged to virtual time), or
 * over loopback HTTP through {@link referenceFetchHandler}, which serves the
 * same four operations as the demo staging app.
 *
 * @module
 */

import {
  type Operation,
  OPERATIONS,
  ProtocolError,
  type StagingTransport,
} from "../contract/protocol.ts";
import type { VirtualTime } from "./virtual_time.ts";

/** Anything that answers staging operations in-process. */
export interface StagingHandler {
  handle(
    op: Operation,
    body: Record<string, unknown>,
  ): Promise<Record<string, unknown>>;
}

/** Options for {@link inProcessTransport}. */
export interface InProcessTransportOptions {
  /** Clock charged with each request's latency; without it requests take no time. */
  time?: VirtualTime;
  /** Virtual milliseconds per request (default 5). */
  latencyMs?: number;
}

/** A transport that calls `system` directly; errors look like the HTTP transport's. */
export function inProcessTransport(
  system: StagingHandler,
  options: InProcessTransportOptions = {},
): StagingTransport {
  const latency = options.latencyMs ?? 5;
  return {
    async post(op, body) {
      options.time?.advance(latency);
      const request = JSON.parse(JSON.stringify(body)) as Record<
        string,
        unknown
      >;
      let answer: Record<string, unknown>;
      try {
        answer = await system.handle(op, request);
      } catch (error) {
        if (error instanceof ProtocolError) throw error;
        throw new ProtocolError(
          "http_status",
          `Request /${op} failed: HTTP 500, expected 200`,
          { status: 500, cause: error },
        );
      }
      return JSON.parse(JSON.stringify(answer)) as Record<string, unknown>;
    },
  };
}

/** A fetch handler serving `POST /ingest|query|inventory|delete` from `system`. */
export function referenceFetchHandler(
  system: StagingHandler,
): (request: Request) => Promise<Response> {
  return async (request) => {
    const op = new URL(request.url).pathname.split("/").at(-1) ?? "";
    if (!(OPERATIONS as readonly string[]).includes(op)) {
      return Response.json({ error: "no such operation" }, { status: 404 });
    }
    if (request.method !== "POST") {
      return Response.json({ error: "use POST" }, {
        status: 405,
        headers: { Allow: "POST" },
      });
    }
    let body: unknown;
    try {
      body = JSON.parse(await request.text());
    } catch {
      body = undefined;
    }
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
      return Response.json({ error: "body: must be a JSON object" }, {
        status: 400,
      });
    }
    try {
      const answer = await system.handle(
        op as Operation,
        body as Record<string, unknown>,
      );
      return Response.json(answer);
    } catch (error) {
      const status = error instanceof ProtocolError && error.status
        ? error.status
        : 500;
      // Never echo internal messages: they could quote stored text.
      return Response.json({ error: "request refused" }, { status });
    }
  };
}
