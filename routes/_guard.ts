/**
 * Request guards for the server: bearer-token check for the API, and refusal
 * of cross-origin browser requests and of foreign Host headers on a loopback
 * bind (a web page must not be able to write into a local index, directly or
 * through DNS rebinding).
 *
 * @module
 */

import type { MiddlewareHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import { isLoopbackHost } from "../lib/loopback.ts";

/** Compares two strings in time independent of where they differ. */
export function constantTimeEqual(a: string, b: string): boolean {
  const left = new TextEncoder().encode(a);
  const right = new TextEncoder().encode(b);
  let diff = left.length ^ right.length;
  for (let i = 0; i < Math.max(left.length, right.length); i++) {
    diff |= (left[i] ?? 0) ^ (right[i] ?? 0);
  }
  return diff === 0;
}

/** Requires `Authorization: Bearer <token>` when a token is configured. */
export function requireBearer(token: string | undefined): MiddlewareHandler {
  return async (c, next) => {
    if (token !== undefined) {
      const header = c.req.header("authorization") ?? "";
      const given = header.startsWith("Bearer ")
        ? header.slice("Bearer ".length)
        : "";
      if (!constantTimeEqual(given, token)) {
        c.header("WWW-Authenticate", 'Bearer realm="trace"');
        throw new HTTPException(401, {
          message:
            "Missing or wrong bearer token; send Authorization: Bearer $TRACE_INGEST_TOKEN",
        });
      }
    }
    await next();
  };
}

/** Refuses cross-origin browser requests, and non-loopback Host headers when bound to loopback. */
export function sameOriginOnly(
  options: { loopbackBind: boolean },
): MiddlewareHandler {
  return async (c, next) => {
    const host = c.req.header("host") ?? "";
    const hostname = host.replace(/:\d+$/, "");
    if (options.loopbackBind && hostname !== "" && !isLoopbackHost(hostname)) {
      throw new HTTPException(403, {
        message:
          `Host "${host}" is not served here; use 127.0.0.1 or localhost`,
      });
    }
    const origin = c.req.header("origin");
    if (origin !== undefined && origin !== "null") {
      let originHost = "";
      try {
        originHost = new URL(origin).host;
      } catch {
        // Unparseable origins are treated as foreign.
      }
      if (originHost !== host) {
        throw new HTTPException(403, {
          message: "Cross-origin requests are refused",
        });
      }
    } else if (origin === "null") {
      throw new HTTPException(403, {
        message: "Cross-origin requests are refused",
      });
    }
    await next();
  };
}
