/** A 200 answer that says it failed is never a result: the run is INCONCLUSIVE, not PASS. */

import assert from "node:assert/strict";
import { parseResponse, ProtocolError } from "../lib/contract/protocol.ts";
import { memoryCheckpointSink } from "../lib/runner/checkpoint.ts";
import { runDeletionContract } from "../lib/runner/engine.ts";
import { FakeTarget, VirtualClock } from "./_fake_target.ts";
import { stagingConfig } from "./_helpers.ts";

const CONFIG = stagingConfig({ deletion_window_seconds: 1 });

Deno.test("parseResponse() refuses an answer whose top-level error key says something", () => {
  for (const error of ["delete failed", { code: 5 }, ["x"], 1, true]) {
    for (const key of ["error", "errors"]) {
      assert.throws(
        () => parseResponse("delete", { acknowledged: true, [key]: error }),
        (e: unknown) =>
          e instanceof ProtocolError && e.failure === "schema" &&
          /^\/delete response: HTTP 200 but its top-level error or errors key holds a value/
            .test(e.message),
      );
    }
  }
  // Nothing to say, or said deeper down (an application's own field), is fine.
  for (const error of [null, false, 0, "", [], {}]) {
    assert.deepEqual(
      parseResponse("delete", { acknowledged: true, error, errors: error }),
      { acknowledged: true },
    );
  }
  assert.deepEqual(
    parseResponse("query", { text: "", sources: [{ error: "x" }] }),
    { text: "", sources: [{ error: "x" }] },
  );
});

Deno.test("a run whose adapter answers 200 with an error after the deletion is INCONCLUSIVE", async () => {
  const clock = new VirtualClock();
  const target = new FakeTarget(clock);
  let deleted = false;
  const report = await runDeletionContract(CONFIG, {
    transport: {
      post: async (op, body) => {
        if (op === "delete") {
          deleted = true;
          // Nothing was deleted: the catch-all handler still answered 200.
          return { acknowledged: true, error: "read-only replica" };
        }
        const answer = await target.post(op, body);
        return deleted && op !== "ingest"
          ? { ...answer, error: "backend unavailable" }
          : answer;
      },
    },
    target: { id: "fake", base_url: CONFIG.base_url, source: "config" },
    checkpoint: memoryCheckpointSink(),
    clock,
  });
  assert.equal(report.verdict, "INCONCLUSIVE", JSON.stringify(report.findings));
  assert.ok(
    report.findings.some((f) =>
      /top-level error or errors key holds a value/.test(f.message)
    ),
    JSON.stringify(report.findings),
  );
});
