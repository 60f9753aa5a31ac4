/** Malformed inventory answers are never results: the run is INCONCLUSIVE. */

import assert from "node:assert/strict";
import { memoryCheckpointSink } from "../lib/runner/checkpoint.ts";
import { runDeletionContract } from "../lib/runner/engine.ts";
import { FakeTarget, VirtualClock } from "./_fake_target.ts";
import { stagingConfig } from "./_helpers.ts";

const CONFIG = stagingConfig({ deletion_window_seconds: 1 });

const BROKEN: [
  string,
  (body: Record<string, unknown>) => Record<string, unknown>,
  RegExp,
][] = [
  [
    "a string count",
    (b) => ({ ...b, vector_records: "0" }),
    /vector_records: must be a non-negative integer/,
  ],
  [
    "a boolean count",
    (b) => ({ ...b, cache_records: false }),
    /cache_records: must be a non-negative integer/,
  ],
  [
    "a null count",
    (b) => ({ ...b, source_records: null }),
    /source_records: must be a non-negative integer/,
  ],
  [
    "a float count",
    (b) => ({ ...b, source_records: 0.5 }),
    /source_records: must be a non-negative integer/,
  ],
  [
    "a negative count",
    (b) => ({ ...b, source_records: -1 }),
    /source_records: must be a non-negative integer/,
  ],
  [
    "a count too large to read exactly",
    (b) => ({ ...b, cache_records: 2 ** 60 }),
    /cache_records: must be at most 9007199254740991 \(2\^53 - 1\), the largest integer a JSON number carries exactly$/,
  ],
  [
    "a missing count",
    ({ cache_records: _, ...rest }) => rest,
    /cache_records: is required/,
  ],
  [
    "a missing complete flag",
    ({ complete: _, ...rest }) => rest,
    /complete: is required/,
  ],
];

Deno.test("runDeletionContract() treats malformed inventory answers in the window as missing observations", async (t) => {
  for (const [name, mangle, message] of BROKEN) {
    await t.step(name, async () => {
      const clock = new VirtualClock();
      const target = new FakeTarget(clock);
      let deleted = false;
      const report = await runDeletionContract(CONFIG, {
        transport: {
          post: async (op, body) => {
            const answer = await target.post(op, body);
            if (op === "delete") deleted = true;
            return op === "inventory" && deleted ? mangle(answer) : answer;
          },
        },
        target: { id: "fake", base_url: CONFIG.base_url, source: "config" },
        checkpoint: memoryCheckpointSink(),
        clock,
      });
      assert.equal(report.verdict, "INCONCLUSIVE");
      const finding = report.findings.find((f) => f.code === "request_error");
      assert.ok(finding, JSON.stringify(report.findings));
      assert.match(finding.message, message);
      assert.ok(report.samples.every((s) => s.inventory === null));
      assert.equal(report.cleanup.cleanup_complete, false);
    });
  }
});

Deno.test("runDeletionContract() cannot establish a baseline from a malformed inventory", async () => {
  const clock = new VirtualClock();
  const target = new FakeTarget(clock);
  const report = await runDeletionContract(CONFIG, {
    transport: {
      post: async (op, body) => {
        const answer = await target.post(op, body);
        return op === "inventory" ? { ...answer, vector_records: 1.5 } : answer;
      },
    },
    target: { id: "fake", base_url: CONFIG.base_url, source: "config" },
    checkpoint: memoryCheckpointSink(),
    clock,
  });
  assert.equal(report.verdict, "INCONCLUSIVE");
  assert.equal(report.deletion, null);
  assert.match(
    report.baseline.problems.join(";"),
    /\/inventory \(test\) failed: \/inventory response: vector_records/,
  );
});
