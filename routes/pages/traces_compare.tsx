/**
 * `/traces/compare` and `/traces/compare.json`: structural differences
 * between a baseline root and a candidate root (events, kinds, where their
 * sequences part, lineage lanes, selections, analysis findings). Each root
 * is read on its own, up to 1,000 events, so neither takes the other's
 * budget. Nothing is executed: recorded metadata is compared.
 *
 * @module
 */

import type { Context } from "hono";
import { ScopeError } from "../../lib/auth/mod.ts";
import type { TraceDb } from "../../lib/db.ts";
import { quoteValue } from "../../lib/echo.ts";
import { ConfigError, TraceError } from "../../lib/errors.ts";
import {
  compareRoots,
  readRootEvents,
  type RootRead,
  type TraceFilter,
} from "../../lib/obs/query/mod.ts";
import type { TenantScope } from "../principal.ts";
import { obsProvisioned } from "./_obs_ready.ts";
import { CompareBody, RefusedCompareBody } from "./traces_compare_body.tsx";
import type { UiEnv } from "../ui/context.ts";
import {
  formRefusal,
  namedFields,
  refusalStatus,
} from "../ui/form_refusal.tsx";
import type { PageSpec } from "../ui/page.ts";
import { nextTurn } from "../ui/turn.ts";
import {
  cleanParams,
  COMPARE_PATH,
  type CompareSide,
  outsideScope,
  parseCompareParams,
  withinScope,
} from "../ui/trace_params.ts";

import type {
  CompareData,
  RefusedCompare,
  SideRead,
} from "./traces_compare_data.ts";

/** The comparison page over `db`. */
export function comparePage(
  db: TraceDb,
): PageSpec<CompareData | RefusedCompare> {
  return {
    path: COMPARE_PATH,
    title: "Compare roots",
    load: (c) => loadOrRefuse(db, c),
    render: (data, view) =>
      "refused" in data
        ? <RefusedCompareBody data={data} view={view} />
        : <CompareBody data={data} view={view} />,
    status: (data) => refusalStatus("refused" in data ? data.refused : null),
  };
}

/** The form's fields: each side's root and application. */
const SIDE_FIELDS = [
  "baseline",
  "baseline_application_id",
  "candidate",
  "candidate_application_id",
] as const;

/**
 * The comparison, or for a browser the page's refusal of it: a query it
 * cannot read, a side outside the account's scope, a root id that two
 * applications share. The twin gets the error thrown.
 */
async function loadOrRefuse(
  db: TraceDb,
  c: Context<UiEnv>,
): Promise<CompareData | RefusedCompare> {
  try {
    return await loadCompare(db, c);
  } catch (error) {
    const params = cleanParams(new URL(c.req.url).searchParams);
    const scope = c.get("principal").scope;
    return {
      refused: formRefusal(
        c,
        error,
        (message) =>
          SIDE_FIELDS.filter((name) =>
            (params.has(name) &&
              namedFields(message, SIDE_FIELDS).includes(name)) ||
            chooses(error, name, params, scope)
          ),
      ),
    };
  }
}

/**
 * Whether the side field `name` is the one to correct for `error`, which
 * does not name it: a side's application outside the scope (the refusal
 * names application_id), or the application of a side whose root two
 * applications share (the refusal names the root).
 */
function chooses(
  error: unknown,
  name: string,
  params: URLSearchParams,
  scope: TenantScope,
): boolean {
  const side = name.replace(/_application_id$/, "");
  if (side === name) return false;
  const app = params.get(name);
  if (error instanceof ScopeError) {
    return app !== null && app !== "" && outsideScope(scope, app);
  }
  const root = params.get(side);
  return error instanceof TraceError && error.code === "conflict" &&
    !app && root !== null && error.message.includes(quoteValue(root));
}

async function loadCompare(
  db: TraceDb,
  c: Context<UiEnv>,
): Promise<CompareData> {
  const params = cleanParams(new URL(c.req.url).searchParams);
  const scope = c.get("principal").scope;
  const request = parseCompareParams(params, scope);
  const empty: CompareData = {
    request,
    provisioned: true,
    executed: false,
    baseline: null,
    candidate: null,
    comparison: null,
  };
  if (!(await obsProvisioned(db))) return { ...empty, provisioned: false };
  const read = (side: CompareSide | undefined, name: string) =>
    side
      ? readRootEvents(db, sideFilter(request.scope, side, name, scope))
      : Promise.resolve(null);
  const baseline = await read(request.baseline, "baseline");
  await nextTurn();
  const candidate = await read(request.candidate, "candidate");
  await nextTurn();
  return {
    ...empty,
    baseline: baseline && withoutEvents(baseline),
    candidate: candidate && withoutEvents(candidate),
    // A side with no event is unknown, not the same as the other: two
    // empty reads would otherwise compare as identical.
    comparison: baseline?.events.length && candidate?.events.length
      ? compareRoots(baseline.events, candidate.events)
      : null,
  };
}

function sideFilter(
  shared: TraceFilter,
  side: CompareSide,
  name: string,
  scope: TenantScope,
): TraceFilter {
  // A side outside the operator's scope is refused as such (403) first.
  if (side.application_id !== undefined) {
    withinScope({ application_id: side.application_id }, scope);
  }
  if (
    side.application_id !== undefined && shared.application_id !== undefined &&
    side.application_id !== shared.application_id
  ) {
    throw new ConfigError(
      `Invalid trace page query: ${name}_application_id differs from application_id; give one of them`,
    );
  }
  return withinScope({
    ...shared,
    root_trace_id: side.root_trace_id,
    ...(side.application_id === undefined
      ? {}
      : { application_id: side.application_id }),
  }, scope);
}

function withoutEvents(read: RootRead): SideRead {
  const { events, ...rest } = read;
  return { ...rest, events: events.length };
}
