import assert from "node:assert/strict";
import { runDeletionContract } from "../lib/runner/engine.ts";
import { memoryCheckpointSink } from "../lib/runner/checkpoint.ts";
import { evaluateRun } from "../lib/reference/evaluate.ts";
import type { ReferencePipeline } from "../lib/memory/pipeline.ts";
import {
  referenceConfig,
  referenceTarget,
  runReferenceSuite,
  runReferenceSystem,
} from "../lib/reference/suite.ts";
import {
  findSystem,
  PAGINATION_PAGE_SIZE,
  PAGINATION_SEED_RECORDS,
  REFERENCE_SYSTEMS,
  type ReferenceSystemSpec,
} from "../lib/reference/systems.ts";
import { inProcessTransport } from "../lib/reference/transport.ts";
import { VirtualTime } from "../lib/reference/virtual_time.ts";

/** The outcome each system must reach, written out independently of the specs. */
const EXPECTED: Record<string, string> = {
  "correct": "PASS",
  "stale-cache": "FAIL",
  "worker-resurrect": "FAIL",
  "tombstone-late-compaction": "FAIL",
  "tombstone-window-compaction": "PASS (transient)",
  "paginated-delete": "FAIL",
  "eventual-vector-propagation": "PASS (transient)",
  "inventory-first-page": "PASS (blind spot)",
  "control-collateral": "INCONCLUSIVE",
};

function spec(name: string): ReferenceSystemSpec {
  const found = findSystem(name);
  assert.ok(found, `no reference system ${name}`);
  return found;
}

Deno.test("runReferenceSuite() lands every reference system on its expected outcome", async (t) => {
  const results = await runReferenceSuite();
  assert.deepEqual(
    results.map((r) => r.system),
    REFERENCE_SYSTEMS.map((s) => s.name),
  );
  assert.deepEqual(
    Object.keys(EXPECTED).toSorted(),
    results.map((r) => r.system).toSorted(),
  );
  for (const result of results) {
    await t.step(result.system, () => {
      assert.equal(result.report.kind, "reference");
      assert.equal(result.report.state, "completed");
      assert.equal(result.report.target.source, "reference");
      assert.deepEqual(result.evaluation.mismatches, []);
      assert.equal(result.evaluation.observed, EXPECTED[result.system]);
      assert.equal(result.evaluation.matches, true);
    });
  }
});

Deno.test("runReferenceSystem() stresses pagination with 5,000 records and canaries beyond page one", async () => {
  let system: ReferencePipeline | undefined;
  const result = await runReferenceSystem(spec("paginated-delete"), {
    transport: (s, time) => {
      system = s;
      return Promise.resolve(inProcessTransport(s, { time }));
    },
  });
  assert.ok(PAGINATION_SEED_RECORDS >= 5_000);
  assert.equal(result.report.verdict, "FAIL");
  const ns = result.report.namespaces.test;
  const positions = result.report.issued.test.map((id) =>
    system!.listingPosition(ns, id)
  );
  assert.equal(positions.length, 200);
  assert.ok(
    positions.every((p) => p >= PAGINATION_PAGE_SIZE),
    `some canary is on page one: ${Math.min(...positions)}`,
  );
  assert.ok(Math.min(...positions) >= PAGINATION_SEED_RECORDS);
  assert.equal(result.hidden.source_records, 200);
});

Deno.test("runReferenceSystem() resurrects vectors only when the scenario releases the barrier", async () => {
  const resurrect = spec("worker-resurrect");
  const result = await runReferenceSystem(resurrect);
  const vectors = result.report.samples.map((s) => s.inventory?.vector_records);
  assert.deepEqual(vectors.slice(0, 3), [0, 0, 0]);
  assert.equal(vectors.at(-1), 3);
  const finding = result.report.findings.find((f) =>
    f.code === "residual_store"
  );
  assert.match(finding?.message ?? "", /came back/);

  // The same system without its scenario hook: nothing ever releases the worker.
  const undriven: ReferenceSystemSpec = {
    ...resurrect,
    build: async (time) => ({ system: (await resurrect.build(time)).system }),
  };
  const quiet = await runReferenceSystem(undriven);
  assert.equal(quiet.report.verdict, "PASS");
  assert.equal(quiet.evaluation.matches, false);
});

Deno.test("runReferenceSystem() shows the blind spot: PASS while deleted records stay stored", async () => {
  const result = await runReferenceSystem(spec("inventory-first-page"));
  assert.equal(result.report.verdict, "PASS");
  assert.equal(result.evaluation.observed, "PASS (blind spot)");
  assert.equal(result.hidden.source_records, 3);
  assert.equal(result.hidden.vector_records, 3);
  assert.ok(
    result.report.samples.every((s) => s.inventory?.source_records === 0),
  );
});

Deno.test("evaluateRun() flags a checker that misses a defect or fails a correct system", async () => {
  const correct = await runReferenceSystem(spec("correct"));
  const stale = await runReferenceSystem(spec("stale-cache"));
  const missed = evaluateRun(spec("stale-cache"), correct.report);
  assert.equal(missed.matches, false);
  assert.match(missed.mismatches.join("\n"), /verdict PASS, expected FAIL/);
  assert.match(
    missed.mismatches.join("\n"),
    /missing finding residual_store:cache_records/,
  );
  const wronglyFailed = evaluateRun(spec("correct"), stale.report);
  assert.equal(wronglyFailed.matches, false);
  const transientAsImmediate = evaluateRun(
    spec("correct"),
    (await runReferenceSystem(spec("eventual-vector-propagation"))).report,
  );
  assert.match(
    transientAsImmediate.mismatches.join("\n"),
    /PASS was transient, expected immediate/,
  );
});

Deno.test("evaluateRun() refuses a blind spot that hid nothing", async () => {
  const blind = spec("inventory-first-page");
  const result = await runReferenceSystem(blind);
  const evaluation = evaluateRun(blind, result.report, {
    source_records: 0,
    vector_records: 0,
    cache_records: 0,
  });
  assert.equal(evaluation.matches, false);
  assert.match(evaluation.mismatches[0] ?? "", /did not materialise/);
});

Deno.test("VirtualTime.sleep() runs the scheduler timers that fall due", async () => {
  const time = new VirtualTime(1_000);
  const fired: number[] = [];
  time.scheduler.setTimeout(() => fired.push(time.now()), 300);
  time.scheduler.setTimeout(() => fired.push(time.now()), 900);
  await time.sleep(500);
  assert.deepEqual(fired, [1_300]);
  assert.equal(time.now(), 1_500);
  const aborted = new AbortController();
  aborted.abort();
  await time.sleep(1_000, aborted.signal);
  assert.equal(time.now(), 1_500);
  await time.sleep(400);
  assert.deepEqual(fired, [1_300, 1_900]);
  assert.equal(time.wallNow().getTime(), 1_900);
});

Deno.test("runDeletionContract() with a reference system sleeps on virtual time only", async () => {
  const correct = spec("correct");
  const time = new VirtualTime(0);
  const { system } = await correct.build(time);
  try {
    const report = await runDeletionContract(referenceConfig(correct), {
      transport: inProcessTransport(system, { time }),
      target: referenceTarget(correct),
      checkpoint: memoryCheckpointSink(),
      kind: "reference",
      clock: time,
    });
    assert.equal(report.verdict, "PASS");
    assert.equal(report.samples.length, 11);
    assert.ok(report.samples.at(-1)!.started_at_seconds >= 5);
    assert.ok(time.now() >= 5_000);
  } finally {
    system.close();
  }
});
