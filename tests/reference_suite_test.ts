import assert from "node:assert/strict";
import { ProtocolError } from "../lib/contract/protocol.ts";
import { runDeletionContract } from "../lib/runner/engine.ts";
import {
  describeRendering,
  type RenderingTrait,
} from "../lib/runner/marker/mod.ts";
import { memoryCheckpointSink } from "../lib/runner/checkpoint.ts";
import { evaluateRun } from "../lib/reference/evaluate.ts";
import type { MemoryPipeline } from "../lib/memory/mod.ts";
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
  type PipelineSystemSpec,
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
  "control-move": "INCONCLUSIVE",
  "interrupted-window": "INCONCLUSIVE",
  "rendered-markdown": "FAIL",
  "rendered-html": "FAIL",
  "rendered-html-named": "FAIL",
  "rendered-reworded": "FAIL",
  "rendered-full-width": "FAIL",
  "rendered-wrapped": "FAIL",
  "rendered-homoglyphs": "FAIL",
  "rendered-data-uri": "FAIL",
  "rendered-hex": "FAIL",
  "rendered-spaced-hex": "FAIL",
  "rendered-hexdump": "FAIL",
  "rendered-od-words": "FAIL",
  "rendered-percent-url": "FAIL",
  "rendered-escaped-json": "FAIL",
  "rendered-correct": "PASS",
  // The demo app's presets, as its README table documents them.
  "demo-healthy": "PASS",
  "demo-stale-cache": "FAIL",
  "demo-vector-resurrect": "FAIL",
  "demo-slow-vector": "PASS (transient)",
  "demo-soft-delete": "FAIL",
  "demo-lost-control": "INCONCLUSIVE",
  "demo-move-to-control": "INCONCLUSIVE",
  "demo-partial-inventory": "INCONCLUSIVE",
  // Trace's own index behind the contract, with its erasure and a defective one.
  "trace-index": "PASS",
  "trace-index-skips-previews": "FAIL",
};

function spec(name: string): PipelineSystemSpec {
  const found = findSystem(name);
  assert.ok(found?.kind === "pipeline", `no pipeline system ${name}`);
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
      assert.equal(
        result.report.state,
        result.system === "interrupted-window" ? "interrupted" : "completed",
      );
      assert.equal(result.report.target.source, "reference");
      assert.deepEqual(result.evaluation.mismatches, []);
      assert.equal(result.evaluation.observed, EXPECTED[result.system]);
      assert.equal(result.evaluation.matches, true);
    });
  }
});

Deno.test("runReferenceSystem() stresses pagination with 5,000 records and canaries beyond page one", async () => {
  let system: MemoryPipeline | undefined;
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

Deno.test("evaluateRun() flags a cleanup outcome other than the one a system states", async () => {
  const stale = spec("demo-stale-cache");
  assert.equal(stale.expected.cleanup_complete, false);
  const result = await runReferenceSystem(stale);
  assert.deepEqual(result.evaluation.mismatches, []);
  const cleaned = {
    ...result.report,
    cleanup: { ...result.report.cleanup, cleanup_complete: true },
  };
  assert.deepEqual(evaluateRun(stale, cleaned).mismatches, [
    "cleanup complete, expected incomplete",
  ]);
  // Systems that state no cleanup outcome are not judged on it.
  assert.equal(spec("stale-cache").expected.cleanup_complete, undefined);
  assert.deepEqual(evaluateRun(spec("stale-cache"), cleaned).mismatches, []);
});

Deno.test("inProcessTransport() fails like HTTP: 400 for a refused body, 500 for a broken system", async () => {
  const time = new VirtualTime(0);
  const { system } = await spec("correct").build(time);
  const transport = inProcessTransport(system, { time });
  const options = { timeoutMs: 1_000 };
  try {
    await assert.rejects(
      transport.post("delete", { namespace: "trace-test-x" }, options),
      (error: unknown) =>
        error instanceof ProtocolError && error.status === 400 &&
        /HTTP 400, expected 200 \(ids: is required\)/.test(error.message),
    );
    assert.equal(time.now(), 5, "each request is charged its latency");
    system.close();
    await assert.rejects(
      transport.post("inventory", { namespace: "trace-test-x" }, options),
      (error: unknown) =>
        error instanceof ProtocolError && error.status === 500 &&
        error.failure === "http_status",
    );
  } finally {
    system.close();
  }
});

Deno.test("docs/reference.md lists every reference system with its expected outcome", async () => {
  const doc = await Deno.readTextFile(
    new URL("../docs/reference.md", import.meta.url),
  );
  const rows = new Map<string, string>();
  for (const line of doc.split("\n")) {
    const match = /^\| `([a-z][a-z-]*)`\s*\|.*\|\s*(.+?)\s*\|$/.exec(line);
    if (match) rows.set(match[1]!, match[2]!);
  }
  assert.deepEqual([...rows.keys()], REFERENCE_SYSTEMS.map((s) => s.name));
  for (const system of REFERENCE_SYSTEMS) {
    // The cell may explain the outcome in parentheses after the label.
    const cell = rows.get(system.name) ?? "";
    const label = /^(PASS|FAIL|INCONCLUSIVE)( \((transient|blind spot)\))?/
      .exec(cell)?.[0];
    assert.equal(label, EXPECTED[system.name], system.name);
  }
});

/** The rendering traits each rendered leak's final sample names, in report order. */
const LEAK_TRAITS: Record<string, RenderingTrait[]> = {
  "rendered-markdown": ["markdown_escapes"],
  "rendered-html": ["html_entities"],
  "rendered-html-named": ["html_entities", "compatibility_forms"],
  "rendered-reworded": ["case", "separators"],
  "rendered-full-width": ["full_width"],
  "rendered-wrapped": ["line_breaks", "invisible_characters"],
  "rendered-homoglyphs": ["homoglyphs"],
  "rendered-data-uri": ["base64"],
  "rendered-hex": ["hex"],
  "rendered-spaced-hex": ["hex"],
  "rendered-hexdump": ["hex"],
  "rendered-od-words": ["hex"],
  "rendered-percent-url": ["percent_encoding"],
  "rendered-escaped-json": ["string_escapes"],
};

Deno.test("runReferenceSystem() leaks in every rendered or encoded spelling are FAIL on retrieval alone", async (t) => {
  const leaks = REFERENCE_SYSTEMS.filter((s) =>
    s.name.startsWith("rendered-") && s.name !== "rendered-correct"
  );
  assert.deepEqual(leaks.map((s) => s.name), Object.keys(LEAK_TRAITS));
  for (const leak of leaks) {
    await t.step(leak.name, async () => {
      const { report } = await runReferenceSystem(leak);
      assert.equal(report.verdict, "FAIL");
      // Every store reads 0: the rendered answer is the only evidence, so a
      // byte-exact check would have passed this system.
      assert.deepEqual(
        report.findings.filter((f) => f.severity === "fail").map((f) => f.code),
        ["marker_retrievable"],
      );
      const last = report.samples.at(-1)!;
      assert.deepEqual(
        [last.marker_form, last.inventory?.cache_records],
        ["rendered", 0],
      );
      assert.equal(report.baseline.marker_form, "rendered");
      assert.equal(report.baseline.control_form, "rendered");
      const traits = LEAK_TRAITS[leak.name]!;
      assert.deepEqual(last.marker_rendering, traits);
      const finding = report.findings[0]!;
      assert.deepEqual(finding.marker_forms, ["rendered"]);
      assert.match(
        finding.message,
        new RegExp(
          `rendered with ${
            describeRendering(traits)
          } rather than byte for byte`,
        ),
      );
    });
  }
});

Deno.test("runReferenceSystem() recognises rendered markers at the baseline and passes a correct renderer", async () => {
  const { report, evaluation } = await runReferenceSystem(
    spec("rendered-correct"),
  );
  assert.equal(report.verdict, "PASS");
  assert.deepEqual(evaluation.mismatches, []);
  assert.deepEqual(
    [report.baseline.marker_form, report.baseline.control_form],
    ["rendered", "rendered"],
  );
  assert.ok(report.samples.every((s) => s.marker_seen === false));
  assert.ok(
    report.samples.every((s) =>
      s.control_seen === true && s.control_form === "rendered"
    ),
  );
});

Deno.test("runReferenceSystem() interrupted mid-window with vectors still counted is INCONCLUSIVE, and PASS left alone", async () => {
  const interrupted = spec("interrupted-window");
  const { report, evaluation } = await runReferenceSystem(interrupted);
  assert.deepEqual(evaluation.mismatches, []);
  assert.equal(report.state, "interrupted");
  assert.equal(report.verdict, "INCONCLUSIVE");
  assert.deepEqual(
    report.samples.map((s) => s.inventory?.vector_records),
    [3, 3, 3, 3],
  );
  assert.ok(report.findings.every((f) => f.severity !== "fail"));
  assert.equal(report.cleanup.cleanup_complete, true);
  assert.equal(report.cleanup.interrupted, true);

  // Without the operator's interrupt the same system clears inside the window.
  const alone: ReferenceSystemSpec = {
    ...interrupted,
    build: async (time) => ({
      system: (await interrupted.build(time)).system,
    }),
  };
  const left = await runReferenceSystem(alone);
  assert.equal(left.report.state, "completed");
  assert.equal(left.report.verdict, "PASS");
  assert.deepEqual(
    left.report.findings.filter((f) => f.severity === "transient").map((f) =>
      f.subject
    ),
    ["vector_records"],
  );
});
