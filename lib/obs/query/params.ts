/**
 * Query-string form of a trace query, shared by `GET /api/events`,
 * `GET /api/events/summary` and the CLI. Repeatable parameters: `agent_id`,
 * `memory_id`, `kind`, `status`, `resource` (exact id, any type unless
 * `resource_type` is given). `anonymous=true` selects anonymous events only;
 * omitting both it and `user_id` leaves the user unscoped. A parameter that
 * would narrow nothing (`resource_type` without `resource`, `anonymous=false`)
 * is refused rather than ignored.
 *
 * @module
 */

import * as v from "valibot";
import { ConfigError } from "../../errors.ts";
import type { TraceFilter } from "./filters.ts";
import { MAX_PAGE_LIMIT, type TraceQuery, TraceQuerySchema } from "./query.ts";
import { quoteValue } from "../../echo.ts";

/** Parameters given at most once, with the query field each sets. */
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

/** Repeatable parameters and the list field each fills. */
const REPEATED = {
  agent_id: "agent_ids",
  memory_id: "memory_ids",
  kind: "kinds",
  status: "statuses",
} as const;

/**
 * Repeatable parameters whose values may also be separated by commas:
 * kinds and statuses are tokens, which never hold one. An agent or memory
 * id may (`bot,v2`), so each of its values is one id.
 */
const COMMA_LISTS: ReadonlySet<string> = new Set(["kind", "status"]);

const OTHER = [
  "resource",
  "resource_type",
  "anonymous",
  "success",
  "limit",
] as const;

/** Every parameter a trace query understands. */
export const TRACE_QUERY_PARAMS = [
  ...SINGLE,
  ...Object.keys(REPEATED) as (keyof typeof REPEATED)[],
  ...OTHER,
] as const;
/** One of {@link TRACE_QUERY_PARAMS}. */
export type TraceQueryParam = typeof TRACE_QUERY_PARAMS[number];

/** Parameters that page a query; a summary or export takes neither. */
const PAGING_PARAMS: ReadonlySet<string> = new Set(["limit", "cursor"]);

const KNOWN: ReadonlySet<string> = new Set(TRACE_QUERY_PARAMS);

/** CLI flag names whose parameter is not the flag plus `_id`. */
const FLAG_ALIASES: Readonly<Record<string, TraceQueryParam>> = {
  root: "root_trace_id",
  root_id: "root_trace_id",
  since: "start_time",
  until: "end_time",
  application: "application_id",
};

/** List fields of a query body (and of the library's filter), by the parameter each is spelt as here. */
const BODY_SPELLINGS: Readonly<Record<string, TraceQueryParam>> = {
  ...Object.fromEntries(
    Object.entries(REPEATED).map(([param, field]) => [field, param]),
  ),
  resources: "resource",
};

/** The refusal of an unknown parameter, naming the one it most likely meant. */
function unknownParam(key: string): string {
  const listed = Object.hasOwn(BODY_SPELLINGS, key)
    ? BODY_SPELLINGS[key]
    : undefined;
  if (listed) {
    return `unknown parameter ${
      quoteValue(key)
    }; the query string spells it ${listed} (repeat it${
      COMMA_LISTS.has(listed) ? ", or separate values with commas" : ""
    })`;
  }
  const near = suggestParam(key);
  return near
    ? `unknown parameter ${quoteValue(key)}; did you mean ${near}?`
    : `unknown parameter ${quoteValue(key)}; remove it`;
}

/** The parameter a misnamed one (often the CLI flag name) most likely meant. */
function suggestParam(key: string): TraceQueryParam | undefined {
  const snake = key.replaceAll("-", "_");
  if (KNOWN.has(snake)) return snake as TraceQueryParam;
  if (KNOWN.has(`${snake}_id`)) return `${snake}_id` as TraceQueryParam;
  return FLAG_ALIASES[snake];
}

/** Options for {@link traceQueryFromParams}. */
export interface TraceParamsOptions {
  /** How messages name a parameter (the CLI names its flags); default: the parameter. */
  label?: (param: TraceQueryParam) => string;
}

/** Converts query-string parameters to a validated {@link TraceQuery}. */
export function traceQueryFromParams(
  params: URLSearchParams,
  options: TraceParamsOptions = {},
): TraceQuery {
  const label = options.label ?? ((param) => param);
  for (const key of params.keys()) {
    if (!KNOWN.has(key)) throw invalid(unknownParam(key));
  }
  // Validated here (not only by parseTraceQuery) so that messages name parameters, not fields.
  const parsed = v.safeParse(TraceQuerySchema, rawQuery(params, label));
  if (!parsed.success) throw invalid(describeParamIssue(parsed.issues, label));
  return parsed.output;
}

/** Like {@link traceQueryFromParams} for a summary or export: refuses `limit` and `cursor`. */
export function traceFilterFromParams(
  params: URLSearchParams,
  options: TraceParamsOptions = {},
): TraceFilter {
  for (const key of params.keys()) {
    if (PAGING_PARAMS.has(key)) {
      const name = (options.label ?? ((param) => param))(
        key as TraceQueryParam,
      );
      throw invalid(
        `${name} pages a query and does not apply here; remove it`,
      );
    }
  }
  const { limit: _limit, cursor: _cursor, ...filter } = traceQueryFromParams(
    params,
    options,
  );
  return filter;
}

function invalid(detail: string): ConfigError {
  return new ConfigError(`Invalid trace query: ${detail}`);
}

type Label = (param: TraceQueryParam) => string;

function rawQuery(
  params: URLSearchParams,
  label: Label,
): Record<string, unknown> {
  for (const key of [...SINGLE, ...OTHER]) {
    if (key !== "resource" && params.getAll(key).length > 1) {
      throw invalid(`${label(key)} may be given once`);
    }
  }
  const query: Record<string, unknown> = {};
  for (const key of SINGLE) {
    const value = params.get(key);
    if (value !== null) query[key] = value;
  }
  for (const [key, target] of Object.entries(REPEATED)) {
    const values = params.getAll(key).flatMap((value) =>
      COMMA_LISTS.has(key) ? value.split(",") : [value]
    );
    if (values.length > 0) query[target] = values;
  }
  addUser(params, query, label);
  const success = booleanParam(params, "success", label);
  if (success !== undefined) query.success = success;
  addResources(params, query, label);
  const limit = params.get("limit");
  if (limit !== null) {
    const n = /^\d{1,7}$/.test(limit) ? Number(limit) : Number.NaN;
    if (!(n >= 1 && n <= MAX_PAGE_LIMIT)) {
      throw invalid(
        `${
          label("limit")
        } must be a whole number from 1 to ${MAX_PAGE_LIMIT}, got ${
          quoteValue(limit)
        }`,
      );
    }
    query.limit = n;
  }
  return query;
}

function addUser(
  params: URLSearchParams,
  query: Record<string, unknown>,
  label: Label,
): void {
  const anonymous = booleanParam(params, "anonymous", label);
  if (anonymous === false) {
    throw invalid(
      `${label("anonymous")} only takes true; omit it to include every user`,
    );
  }
  if (anonymous && query.user_id !== undefined) {
    throw invalid(
      `give either ${label("user_id")} or ${label("anonymous")}, not both`,
    );
  }
  if (anonymous) query.user_id = null;
}

function addResources(
  params: URLSearchParams,
  query: Record<string, unknown>,
  label: Label,
): void {
  const type = params.get("resource_type");
  const resources = params.getAll("resource");
  if (type !== null && resources.length === 0) {
    throw invalid(`${label("resource_type")} needs ${label("resource")}`);
  }
  if (resources.length > 0) {
    query.resources = resources.map((id) => (type ? { type, id } : { id }));
  }
}

function booleanParam(
  params: URLSearchParams,
  key: "anonymous" | "success",
  label: Label,
): boolean | undefined {
  const value = params.get(key);
  if (value === null) return undefined;
  if (value === "true" || value === "1") return true;
  if (value === "false" || value === "0") return false;
  throw invalid(`${label(key)} must be true or false`);
}

/** The parameter behind each query field. */
const PARAM_BY_FIELD: Readonly<Record<string, TraceQueryParam>> = {
  agent_ids: "agent_id",
  memory_ids: "memory_id",
  kinds: "kind",
  statuses: "status",
  resources: "resource",
};

/** `--since: must be …`: the first issue, naming the parameter it came from. */
function describeParamIssue(
  issues: readonly v.BaseIssue<unknown>[],
  label: Label,
): string {
  const issue = issues[0];
  if (!issue) return "invalid value";
  const keys = issue.path?.map((item) => String(item.key)) ?? [];
  const field = keys[0];
  if (field === undefined) {
    // The only whole-query check is the time order.
    return `${label("start_time")} must be before ${label("end_time")}`;
  }
  const param = keys[0] === "resources" && keys[2] === "type"
    ? "resource_type"
    : PARAM_BY_FIELD[field] ?? field as TraceQueryParam;
  return `${label(param)}: ${issue.message}`;
}
