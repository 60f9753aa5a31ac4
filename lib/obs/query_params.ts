/**
 * Query-string form of a trace query, shared by `GET /api/events`,
 * `GET /api/events/summary` and the CLI. Repeatable parameters: `agent_id`,
 * `memory_id`, `kind`, `status`, `resource` (exact id, any type unless
 * `resource_type` is given). `anonymous=true` selects anonymous events only;
 * omitting both it and `user_id` leaves the user unscoped.
 *
 * @module
 */

import { ConfigError } from "../errors.ts";
import { parseTraceQuery, type TraceQuery } from "./query.ts";

const SINGLE = [
  "application_id",
  "user_id",
  "thread_id",
  "root_trace_id",
  "run_id",
  "turn_id",
  "tool",
  "q",
  "start_time",
  "end_time",
  "store",
  "cursor",
] as const;

const REPEATED = {
  agent_id: "agent_ids",
  memory_id: "memory_ids",
  kind: "kinds",
  status: "statuses",
} as const;

const KNOWN = new Set<string>([
  ...SINGLE,
  ...Object.keys(REPEATED),
  "resource",
  "resource_type",
  "anonymous",
  "success",
  "limit",
]);

/** Converts query-string parameters to a validated {@link TraceQuery}. */
export function traceQueryFromParams(params: URLSearchParams): TraceQuery {
  for (const key of params.keys()) {
    if (!KNOWN.has(key)) {
      throw new ConfigError(`Invalid trace query: unknown parameter "${key}"`);
    }
  }
  const query: Record<string, unknown> = {};
  for (const key of SINGLE) {
    const values = params.getAll(key);
    if (values.length > 1) {
      throw new ConfigError(`Invalid trace query: ${key} may be given once`);
    }
    if (values[0] !== undefined) query[key] = values[0];
  }
  for (const [key, target] of Object.entries(REPEATED)) {
    const values = params.getAll(key).flatMap((value) => value.split(","));
    if (values.length > 0) query[target] = values;
  }
  const anonymous = booleanParam(params, "anonymous");
  if (anonymous && query.user_id !== undefined) {
    throw new ConfigError(
      "Invalid trace query: give either user_id or anonymous=true, not both",
    );
  }
  if (anonymous) query.user_id = null;
  const success = booleanParam(params, "success");
  if (success !== undefined) query.success = success;
  const type = params.get("resource_type") ?? undefined;
  const resources = params.getAll("resource");
  if (resources.length > 0) {
    query.resources = resources.map((id) => (type ? { type, id } : { id }));
  }
  const limit = params.get("limit");
  if (limit !== null) {
    query.limit = /^\d{1,7}$/.test(limit) ? Number(limit) : Number.NaN;
  }
  return parseTraceQuery(query);
}

function booleanParam(
  params: URLSearchParams,
  key: string,
): boolean | undefined {
  const value = params.get(key);
  if (value === null) return undefined;
  if (value === "true" || value === "1") return true;
  if (value === "false" || value === "0") return false;
  throw new ConfigError(`Invalid trace query: ${key} must be true or false`);
}
