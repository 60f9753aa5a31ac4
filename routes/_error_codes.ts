/**
 * The codes of answers that carry no domain error, and the paths whose errors
 * are JSON whoever asks. Shared by the app's error mapping (`_errors.ts`) and
 * the connection guard (`listen.ts`), which refuses a request before the app
 * sees it and runs on a thread of its own, so this file imports nothing.
 *
 * @module
 */

/** Error code for each status an `HTTPException` (or the guard) answers with. */
export const CODE_BY_STATUS: Readonly<Record<number, string>> = {
  400: "invalid_request",
  401: "unauthorized",
  403: "forbidden",
  404: "not_found",
  405: "method_not_allowed",
  408: "request_timeout",
  409: "conflict",
  413: "payload_too_large",
  415: "unsupported_media_type",
  431: "request_header_fields_too_large",
  // The server cannot serve it now: the audit trail could not take the
  // action's entry, or it runs no job manager to start runs.
  503: "unavailable",
};

/**
 * Codes of answers whose status alone does not name their cause: a 501 is
 * an action whose host hook the server was not given (`hook_missing`, the
 * reason `/traces/capabilities.json` gives for it) or an erasure without
 * the data directory's erasure key (`erasure_key_missing`, the audit
 * trail's word); a 502 a host hook that threw, answered something other
 * than its required result or did not answer in time (`hook_failed`).
 */
export const CAUSE_CODES = [
  "hook_missing",
  "erasure_key_missing",
  "hook_failed",
] as const;

/** One of {@link CAUSE_CODES}. */
export type CauseCode = typeof CAUSE_CODES[number];

/** Whether `path` belongs to the ingest and query API (`/api`, `/v1`). */
export function isApiPath(path: string): boolean {
  return /^\/(api|v1)(\/|$)/.test(path);
}

/**
 * Whether the app answers an error on `path` as JSON whoever asks: the API,
 * `/mcp` and the pages' `.json` twins. (A page answers a browser with the
 * HTML error page and a script with JSON; it depends on the request's
 * headers, which a refused head may not have delivered.)
 */
export function answersJsonErrors(path: string): boolean {
  return isApiPath(path) || /^\/mcp(\/|$)/.test(path) ||
    path.endsWith(".json");
}
