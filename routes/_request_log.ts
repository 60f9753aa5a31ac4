/**
 * One content-free line per request for the server log: method, route
 * pattern (never the path or query, which may carry ids), status, duration,
 * the items a batch held and, for a refusal, its error code. Enough to debug
 * a misconfigured exporter without writing anything it sent.
 *
 * @module
 */

import type { Context, MiddlewareHandler } from "hono";
import { matchedRoutes } from "hono/route";
import type { ServerLog } from "./_server_log.ts";

/** What a route or the error mapping noted about a request. */
interface RequestNote {
  items?: number;
  noun?: string;
  refusal?: string;
}

const notes = new WeakMap<Request, RequestNote>();

function noteFor(request: Request): RequestNote {
  let note = notes.get(request);
  if (!note) notes.set(request, note = {});
  return note;
}

/** Records how many items (`events`, `spans`) the request's batch held. */
export function noteItems(request: Request, items: number, noun: string): void {
  Object.assign(noteFor(request), { items, noun });
}

/** Records the error code a request was refused with. */
export function noteRefusal(request: Request, code: string): void {
  noteFor(request).refusal = code;
}

/** Writes one line per request to `log`. */
export function requestLogger(log: ServerLog): MiddlewareHandler {
  return async (c, next) => {
    const started = performance.now();
    await next();
    const ms = (performance.now() - started).toFixed(1);
    const note = notes.get(c.req.raw) ?? {};
    const parts = [
      c.req.method,
      routePattern(c),
      String(c.res.status),
      `${ms}ms`,
    ];
    if (note.items !== undefined) parts.push(`${note.noun}=${note.items}`);
    if (note.refusal !== undefined) parts.push(`refused=${note.refusal}`);
    log(parts.join(" "));
  };
}

/** The most specific route the request matched (`-` when only the catch-all did). */
function routePattern(c: Context): string {
  const path = matchedRoutes(c).at(-1)?.path ?? "/*";
  return path === "/*" ? "-" : path;
}
