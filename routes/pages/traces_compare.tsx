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
import type { TraceDb } from "../../lib/db.ts";
import { ConfigError } from "../../lib/errors.ts";
import {
  compareRoots,
  readRootEvents,
  type RootRead,
  type TraceFilter,
} from "../../lib/obs/query/mod.ts";
import type { TenantScope } from "../principal.ts";
import { obsProvisioned } from "./_obs_ready.ts";
import { CompareBody } from "./traces_compare_body.tsx";
import type { UiEnv } from "../ui/context.ts";
import type { PageSpec } from "../ui/page.ts";
import { nextTurn } from "../ui/turn.ts";
import {
  cleanParams,
  COMPARE_PATH,
  type CompareSide,
  parseCompareParams,
  withinScope,
} from "../ui/trace_params.ts";

import type { CompareData, SideRead } from "./traces_compare_data.ts";

/** The comparison page over `db`. */
export function comparePage(db: TraceDb): PageSpec<CompareData> {
  return {
    path: COMPARE_PATH,
    title: "Compare roots",
    load: (c) => loadCompare(db, c),
    render: (data, view) => <CompareBody data={data} view={view} />,
  };
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
