/** Query-string parameters of a trace query: what a misspelt one is refused with. */

import assert from "node:assert/strict";
import {
  traceFilterFromParams,
  traceQueryFromParams,
} from "../lib/obs/query/mod.ts";

Deno.test("traceQueryFromParams() names the parameter of a query body's list field", async (t) => {
  const cases = [
    ["statuses=error", "statuses", "status"],
    ["kinds=llm_call", "kinds", "kind"],
    ["agent_ids=a", "agent_ids", "agent_id"],
    ["memory_ids=m", "memory_ids", "memory_id"],
    ["resources=doc-1", "resources", "resource"],
  ] as const;
  for (const [query, given, meant] of cases) {
    await t.step(given, () => {
      for (const parse of [traceQueryFromParams, traceFilterFromParams]) {
        assert.throws(
          () => parse(new URLSearchParams(query)),
          new RegExp(
            `Invalid trace query: unknown parameter "${given}"; the query string spells it ${meant} \\(repeat it, or separate values with commas\\)$`,
          ),
        );
      }
    });
  }
});

Deno.test("traceQueryFromParams() accepts the parameter it suggests for a body spelling", () => {
  const query = traceQueryFromParams(
    new URLSearchParams("status=error,unset"),
  );
  assert.deepEqual(query.statuses, ["error", "unset"]);
});

Deno.test("traceQueryFromParams() still refuses an unknown parameter without a suggestion", () => {
  assert.throws(
    () => traceQueryFromParams(new URLSearchParams("colour=red")),
    /unknown parameter "colour"; remove it$/,
  );
  assert.throws(
    () => traceQueryFromParams(new URLSearchParams("since=x")),
    /unknown parameter "since"; did you mean start_time\?$/,
  );
});
