/**
 * The trace pages' JSON-only endpoints, behind the same sign-in as the
 * pages:
 *
 * - `GET /traces/events.json`: metadata-only events of one store (`store`,
 *   default `trace`), newest first, with a cursor bound to the filters; or,
 *   with `store=all`, the combined bounded snapshot of every store (no
 *   cursor, no limit: it is not a way through history). A parameter that
 *   does not select events (a page's `selected`, `from`, `lane`) or that the
 *   chosen form cannot apply is refused, never ignored.
 * - `GET /traces/capabilities.json`: which actions and host hooks the
 *   signed-in operator has (`capabilitiesOf` in `routes/access.ts`).
 *
 * @module
 */

import { Hono } from "hono";
import type { TraceDb } from "../../lib/db.ts";
import { ConfigError } from "../../lib/errors.ts";
import {
  queryTraceEvents,
  snapshotEvents,
  traceQueryFromParams,
} from "../../lib/obs/query/mod.ts";
import { requirePrincipal, type UiAuth } from "../_ui_auth.ts";
import { capabilitiesOf } from "../access.ts";
import type { UiEnv } from "../ui/context.ts";
import { withinScope } from "../ui/trace_params.ts";

/** Page parameters that never select events. */
const PAGE_ONLY = [
  "selected",
  "selected_application_id",
  "from",
  "lane",
  "baseline",
  "candidate",
];

/** What the JSON endpoints need. */
export interface TraceJsonDeps {
  db: TraceDb;
  auth: UiAuth;
}

/** `/traces/events.json` and `/traces/capabilities.json`. */
export function createTraceJson(deps: TraceJsonDeps): Hono<UiEnv> {
  const app = new Hono<UiEnv>();
  app.get(
    "/traces/events.json",
    requirePrincipal(deps.auth, "json"),
    async (c) => {
      c.header("Cache-Control", "no-store");
      const params = new URL(c.req.url).searchParams;
      const scope = c.get("principal").scope;
      return c.json(await exportAnswer(deps.db, params, scope));
    },
  );
  app.get(
    "/traces/capabilities.json",
    requirePrincipal(deps.auth, "json"),
    (c) => {
      c.header("Cache-Control", "no-store");
      return c.json(capabilitiesOf(c));
    },
  );
  return app;
}

async function exportAnswer(
  db: TraceDb,
  params: URLSearchParams,
  scope: Parameters<typeof withinScope>[1],
): Promise<object> {
  for (const key of PAGE_ONLY) {
    if (params.has(key)) {
      throw invalid(
        `${key} belongs to a trace page and does not select events; remove it`,
      );
    }
  }
  const store = params.get("store") ?? "trace";
  if (store === "all") {
    for (const key of ["cursor", "limit"]) {
      if (params.has(key)) {
        throw invalid(
          `${key} does not apply to store=all, a bounded snapshot (500 events per store, 1,000 in all) without pages; page one store at a time (store=trace, conversation or tool_log) with its cursor`,
        );
      }
    }
    const { store: _all, ...filter } = traceQueryFromParams(params);
    return await snapshotEvents(db, withinScope(filter, scope));
  }
  const withStore = new URLSearchParams(params);
  withStore.set("store", store);
  const { limit, cursor, ...filter } = traceQueryFromParams(withStore);
  const page = await queryTraceEvents(db, {
    ...withinScope(filter, scope),
    ...(limit === undefined ? {} : { limit }),
    ...(cursor === undefined ? {} : { cursor }),
  });
  return { store, ...page };
}

function invalid(detail: string): ConfigError {
  return new ConfigError(`Invalid events export: ${detail}`);
}
