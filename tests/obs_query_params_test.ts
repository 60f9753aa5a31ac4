/** Query-string parameters of a trace query: what a misspelt one is refused with. */

import assert from "node:assert/strict";
import {
  traceFilterFromParams,
  traceQueryFromParams,
} from "../lib/obs/query/mod.ts";

Deno.test("traceQueryFromParams() names the parameter of a query body's list field", async (t) => {
  const commas = ", or separate values with commas";
  const cases = [
    ["statuses=error", "statuses", "status", commas],
    ["kinds=llm_call", "kinds", "kind", commas],
    ["agent_ids=a", "agent_ids", "agent_id", ""],
    ["memory_ids=m", "memory_ids", "memory_id", ""],
    ["resources=doc-1", "resources", "resource", ""],
  ] as const;
  for (const [query, given, meant, more] of cases) {
    await t.step(given, () => {
      for (const parse of [traceQueryFromParams, traceFilterFromParams]) {
        assert.throws(
          () => parse(new URLSearchParams(query)),
          (error: Error) =>
            error.message ===
              `Invalid trace query: unknown parameter "${given}"; the query string spells it ${meant} (repeat it${more})`,
        );
      }
    });
  }
});

Deno.test("an agent or memory id holding a comma is one id; kinds and statuses still split on commas", () => {
  const query = traceQueryFromParams(
    new URLSearchParams(
      "agent_id=bot,v2&agent_id=other&memory_id=mem,1&kind=llm_call,tool_call",
    ),
  );
  assert.deepEqual(query.agent_ids, ["bot,v2", "other"]);
  assert.deepEqual(query.memory_ids, ["mem,1"]);
  assert.deepEqual(query.kinds, ["llm_call", "tool_call"]);
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
