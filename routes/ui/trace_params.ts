/**
 * The query strings of the trace pages, read and written in one place.
 *
 * The finder's state (its filters, the opaque id `q`, the selected event)
 * travels with every link, so a URL can be shared and a round trip through
 * inspection or comparison comes back to the same results with the same
 * event highlighted. Inspection and comparison carry that state as `from`
 * (the finder's query string) and apply its thread, turn, run, memory and
 * time selection to the roots they read. Query parameters only narrow the
 * signed-in operator's tenant scope, never widen it.
 *
 * @module
 */

import * as v from "valibot";
import {
  EVENT_STATUSES,
  type EventStatus,
  OpaqueIdSchema,
  TokenSchema,
  type TraceEvent,
} from "../../lib/obs/mod.ts";
import {
  LINEAGE_LANES,
  type LineageLane,
  type TraceFilter,
  traceFilterFromParams,
} from "../../lib/obs/query/mod.ts";
import { ConfigError } from "../../lib/errors.ts";
import { pageIdPath } from "./page_path.ts";
import {
  narrowScope,
  ScopeError,
  type TenantScope,
} from "../../lib/auth/mod.ts";

/** The finder's page. */
export const FIND_PATH = "/traces/find";
/** The inspection page. */
export const INSPECT_PATH = "/traces/inspect";
/** The comparison page. */
export const COMPARE_PATH = "/traces/compare";

/** Most characters of a carried finder query string (`from`). */
const MAX_FROM = 4_000;

/** The selected event: its id and, when the id is reused, its application. */
export interface SelectedRef {
  event_id: string;
  application_id?: string;
}

/** What the finder was asked. */
export interface FinderRequest {
  /** Filters within the operator's scope (without the finder's `q`). */
  filter: TraceFilter;
  q?: string;
  selected?: SelectedRef;
  cursor?: string;
}

/** What inspection was asked. */
export interface InspectRequest {
  /** The root and the selection its events are read under (no kinds or statuses). */
  scope: TraceFilter & { root_trace_id: string };
  /** Kinds and statuses shown (the whole root is still read). */
  kinds: string[];
  statuses: EventStatus[];
  lane?: LineageLane;
  selected?: string;
  /** The finder's query string, for the way back. */
  from?: string;
}

const Id = OpaqueIdSchema;
const Cursor = v.pipe(
  v.string(),
  v.maxLength(512, "is too long to be a cursor"),
);
const From = v.pipe(
  v.string(),
  v.maxLength(MAX_FROM, `must be at most ${MAX_FROM} characters`),
);

function one<T>(
  params: URLSearchParams,
  key: string,
  schema: v.GenericSchema<string, T>,
): T | undefined {
  const values = params.getAll(key);
  if (values.length === 0) return undefined;
  if (values.length > 1) throw invalid(`${key} may be given once`);
  const parsed = v.safeParse(schema, values[0]);
  if (!parsed.success) {
    throw invalid(`${key}: ${parsed.issues[0]?.message ?? "is invalid"}`);
  }
  return parsed.output;
}

function invalid(detail: string): ConfigError {
  return new ConfigError(`Invalid trace page query: ${detail}`);
}

/** `params` without `keys` (the rest go to the shared filter parser). */
function without(
  params: URLSearchParams,
  keys: readonly string[],
): URLSearchParams {
  const rest = new URLSearchParams(params);
  for (const key of keys) rest.delete(key);
  return rest;
}

/** `filter` narrowed to `scope` by the one scope rule; throws a 403 when it asks for a tenant outside it. */
export function withinScope(
  filter: TraceFilter,
  scope: TenantScope,
): TraceFilter {
  return narrowScope(scope, filter);
}

/** Whether the application `id` lies outside `scope`, by the same rule. */
export function outsideScope(scope: TenantScope, id: string): boolean {
  try {
    narrowScope(scope, { application_id: id });
    return false;
  } catch (error) {
    if (error instanceof ScopeError) return true;
    throw error;
  }
}

// `groups` is the agents-and-threads table's filter text, applied in the browser.
const FINDER_OWN = [
  "q",
  "selected",
  "selected_application_id",
  "cursor",
  "groups",
];

/** Reads the finder's query string. */
export function parseFinderParams(
  params: URLSearchParams,
  scope: TenantScope,
): FinderRequest {
  const filter = traceFilterFromParams(without(params, FINDER_OWN));
  const q = one(params, "q", Id);
  const selected = one(params, "selected", Id);
  const selectedApp = one(params, "selected_application_id", Id);
  const cursor = one(params, "cursor", Cursor);
  if (selectedApp !== undefined && selected === undefined) {
    throw invalid("selected_application_id needs selected");
  }
  // A selection names a tenant too: it may narrow the scope, never widen it.
  if (selectedApp !== undefined) {
    narrowScope(scope, { application_id: selectedApp });
  }
  return {
    filter: withinScope(filter, scope),
    ...(q === undefined ? {} : { q }),
    ...(selected === undefined ? {} : {
      selected: {
        event_id: selected,
        ...(selectedApp === undefined ? {} : { application_id: selectedApp }),
      },
    }),
    ...(cursor === undefined ? {} : { cursor }),
  };
}

// `candidates` is the candidates table's filter text, applied in the browser.
const INSPECT_OWN = [
  "kind",
  "status",
  "lane",
  "selected",
  "from",
  "candidates",
];

const Lane = v.picklist(
  LINEAGE_LANES,
  `must be one of ${LINEAGE_LANES.join(", ")}`,
);
const Kind = TokenSchema;
const Status = v.picklist(
  EVENT_STATUSES,
  `must be one of ${EVENT_STATUSES.join(", ")}`,
);

function list<T>(
  params: URLSearchParams,
  key: string,
  schema: v.GenericSchema<string, T>,
): T[] {
  return params.getAll(key).flatMap((value) => value.split(",")).filter((
    value,
  ) => value !== "").map((value) => {
    const parsed = v.safeParse(schema, value);
    if (!parsed.success) {
      throw invalid(`${key}: ${parsed.issues[0]?.message ?? "is invalid"}`);
    }
    return parsed.output;
  });
}

/** Reads the inspection page's query string (`root_trace_id` is required). */
export function parseInspectParams(
  params: URLSearchParams,
  scope: TenantScope,
): InspectRequest {
  const filter = withinScope(
    traceFilterFromParams(without(params, INSPECT_OWN)),
    scope,
  );
  if (filter.root_trace_id === undefined) {
    throw invalid(
      "root_trace_id is required; open a root from the finder or add root_trace_id",
    );
  }
  const lane = one(params, "lane", Lane);
  const selected = one(params, "selected", Id);
  const from = one(params, "from", From);
  return {
    scope: { ...filter, root_trace_id: filter.root_trace_id },
    kinds: list(params, "kind", Kind),
    statuses: list(params, "status", Status),
    ...(lane === undefined ? {} : { lane }),
    ...(selected === undefined ? {} : { selected }),
    ...(from === undefined ? {} : { from }),
  };
}

/** `params` without empty values (a GET form submits its empty fields). */
export function cleanParams(params: URLSearchParams): URLSearchParams {
  const clean = new URLSearchParams();
  for (const [key, value] of params) {
    if (value !== "") clean.append(key, value);
  }
  return clean;
}

/** One side of a comparison. */
export interface CompareSide {
  root_trace_id: string;
  application_id?: string;
}

/** What the comparison was asked. */
export interface CompareRequest {
  /** Tenant scope and agent or memory, shared by both sides. */
  scope: TraceFilter;
  baseline?: CompareSide;
  candidate?: CompareSide;
  from?: string;
}

const COMPARE_OWN = [
  "baseline",
  "baseline_application_id",
  "candidate",
  "candidate_application_id",
  "from",
];

/** Filters a comparison shares between its sides; the rest select roots, not events. */
const COMPARE_FILTERS = new Set([
  "application_id",
  "user_id",
  "anonymous",
  "agent_id",
  "memory_id",
]);

function side(
  params: URLSearchParams,
  name: "baseline" | "candidate",
): CompareSide | undefined {
  const root = one(params, name, Id);
  const app = one(params, `${name}_application_id`, Id);
  if (root === undefined) {
    if (app !== undefined) {
      throw invalid(`${name}_application_id needs ${name}`);
    }
    return undefined;
  }
  return {
    root_trace_id: root,
    ...(app === undefined ? {} : { application_id: app }),
  };
}

/** Reads the comparison page's query string. */
export function parseCompareParams(
  params: URLSearchParams,
  scope: TenantScope,
): CompareRequest {
  const shared = without(params, COMPARE_OWN);
  for (const key of shared.keys()) {
    if (!COMPARE_FILTERS.has(key)) {
      throw invalid(
        `${key} does not apply to a comparison (each side is a whole root); remove it`,
      );
    }
  }
  const baseline = side(params, "baseline");
  const candidate = side(params, "candidate");
  const from = one(params, "from", From);
  return {
    scope: withinScope(traceFilterFromParams(shared), scope),
    ...(baseline ? { baseline } : {}),
    ...(candidate ? { candidate } : {}),
    ...(from === undefined ? {} : { from }),
  };
}

/** A path with a query string (none when empty). */
export function hrefOf(path: string, params: URLSearchParams): string {
  const query = params.toString();
  return query ? `${path}?${query}` : path;
}

/** `params` with `changes` applied: a string or list sets, `null` removes. */
export function withParams(
  params: URLSearchParams,
  changes: Record<string, string | readonly string[] | null | undefined>,
): URLSearchParams {
  const next = new URLSearchParams(params);
  for (const [key, value] of Object.entries(changes)) {
    if (value === undefined) continue;
    next.delete(key);
    if (value === null) continue;
    for (const item of typeof value === "string" ? [value] : value) {
      next.append(key, item);
    }
  }
  return next;
}

/** The finder's own parameters carried in `from` (its cursor is left behind). */
export function finderState(params: URLSearchParams): string {
  return withParams(params, { cursor: null }).toString();
}

/** The way back to the finder from `from`, with `selected` as now selected. */
export function backToFinder(
  from: string | undefined,
  selected: SelectedRef | undefined,
): string {
  const params = new URLSearchParams(from ?? "");
  const changes: Record<string, string | null> = {};
  if (selected) {
    changes.selected = selected.event_id;
    changes.selected_application_id = selected.application_id ?? null;
  }
  return hrefOf(FIND_PATH, withParams(params, changes));
}

/** What an inspection link names. */
export interface InspectTarget {
  application_id: string;
  root_trace_id: string;
  agent_id?: string | null;
  memory_id?: string | null;
  selected?: string;
  /**
   * The selected event's own scope: a finder value it does not meet is not
   * carried, since an event selected by id may lie outside the finder's
   * filters, and a read narrowed past it would not show it.
   */
  scope?: EventScope;
}

/** The values of an event the carried finder selection is checked against. */
export type EventScope = Pick<
  TraceEvent,
  "user_id" | "thread_id" | "turn_id" | "run_id" | "ts"
>;

/** The finder selection an inspection keeps: thread, turn, run, memory, user and time. */
const CARRIED = [
  "user_id",
  "anonymous",
  "thread_id",
  "turn_id",
  "run_id",
  "start_time",
  "end_time",
] as const;

/** A link to inspect a root, keeping the finder's selection (`finder`: its query string). */
export function inspectHref(
  target: InspectTarget,
  finder: URLSearchParams,
): string {
  const params = new URLSearchParams();
  params.set("application_id", target.application_id);
  params.set("root_trace_id", target.root_trace_id);
  if (target.agent_id) params.set("agent_id", target.agent_id);
  else if (target.memory_id) params.set("memory_id", target.memory_id);
  const { scope } = target;
  for (const key of CARRIED) {
    for (const value of finder.getAll(key)) {
      if (!scope || meets(scope, key, value)) params.append(key, value);
    }
  }
  if (target.selected) params.set("selected", target.selected);
  const from = finderState(finder);
  if (from !== "") params.set("from", from);
  return hrefOf(INSPECT_PATH, params);
}

/** True when an event of `scope` meets the finder value `value` of `key`. */
function meets(
  scope: EventScope,
  key: typeof CARRIED[number],
  value: string,
): boolean {
  switch (key) {
    case "anonymous":
      return scope.user_id === null;
    case "start_time":
      return Date.parse(scope.ts) >= Date.parse(value);
    case "end_time":
      return Date.parse(scope.ts) < Date.parse(value);
    default:
      return scope[key] === value;
  }
}

/**
 * A link to inspect an event's root with the event selected, keeping the
 * finder's selection (where `scope`, the event's own, meets it).
 */
export function inspectEventHref(
  event: {
    application_id: string;
    root_trace_id: string;
    agent_id: string | null;
    memory_id: string | null;
    event_id: string;
  },
  finder: URLSearchParams,
  scope?: EventScope,
): string {
  return inspectHref({
    application_id: event.application_id,
    root_trace_id: event.root_trace_id,
    agent_id: event.agent_id,
    memory_id: event.memory_id,
    selected: event.event_id,
    ...(scope ? { scope } : {}),
  }, finder);
}

/**
 * The evidence of a deletion run: the finder narrowed to the run's test
 * namespace, which the runner's requests and a traced staging app's own
 * events (e.g. `trace demo --trace-to`) both use as their thread, with the
 * run's root event selected. The page lists both sides and, when the app
 * recorded what served each answer, the refs served after their deletion
 * (a stale answer's cache entry), one click from its inspection.
 */
export function runEvidenceHref(
  runId: string,
  testNamespace: string,
  options: { applicationId?: string } = {},
): string {
  const params = new URLSearchParams();
  params.set("thread_id", testNamespace);
  params.set("selected", `${runId}:run`);
  params.set("selected_application_id", options.applicationId ?? "trace");
  return hrefOf(FIND_PATH, params);
}

/** The event page of one event: `/traces/events/ID` narrowed to its application, root and agent. */
export function eventPageHref(
  event: {
    event_id: string;
    application_id: string;
    root_trace_id: string;
    agent_id?: string | null;
  },
): string {
  const params = new URLSearchParams({
    application_id: event.application_id,
    root_trace_id: event.root_trace_id,
  });
  if (event.agent_id) params.set("agent_id", event.agent_id);
  return hrefOf(`/traces/events/${pageIdPath(event.event_id)}`, params);
}
