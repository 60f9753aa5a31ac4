import assert from "node:assert/strict";
import { memoryCheckpointSink } from "../lib/runner/checkpoint.ts";
import { runDeletionContract } from "../lib/runner/engine.ts";
import type { RunEvent } from "../lib/runner/events.ts";
import type { RunReport } from "../lib/runner/report.ts";
import {
  type FakeBehaviour,
  FakeTarget,
  runFake,
  VirtualClock,
} from "./_fake_target.ts";
import { stagingConfig } from "./_helpers.ts";

const CONFIG = stagingConfig({ document_count: 3 });

async function run(behaviour: FakeBehaviour = {}) {
  const clock = new VirtualClock();
  const target = new FakeTarget(clock, behaviour);
  const checkpoint = memoryCheckpointSink();
  const events: RunEvent[] = [];
  const report = await runDeletionContract(CONFIG, {
    transport: target,
    target: { id: "fake", base_url: CONFIG.base_url, source: "config" },
    checkpoint,
    clock,
    onEvent: (event) => events.push(event),
  });
  return { report, target, checkpoint, events };
}

function codes(report: RunReport, severity: string): string[] {
  return report.findings.filter((f) => f.severity === severity).map((f) =>
    `${f.code}:${f.subject}`
  );
}

Deno.test("runDeletionContract() passes a healthy target with complete cleanup", async () => {
  const { report } = await run();
  assert.equal(report.verdict, "PASS");
  assert.equal(report.state, "completed");
  assert.equal(report.cleanup.cleanup_complete, true);
  assert.equal(report.baseline.ok, true);
  assert.equal(report.baseline.inventory?.cache_records, 1);
  assert.deepEqual(codes(report, "fail"), []);
  assert.deepEqual(codes(report, "transient"), []);
});

Deno.test("runDeletionContract() samples until a sample starts at or after the window", async () => {
  const { report } = await run();
  const starts = report.samples.map((s) => s.started_at_seconds);
  assert.equal(starts[0], 0);
  assert.ok(starts.at(-1)! >= 2, `final sample started at ${starts.at(-1)}`);
  assert.ok(starts.slice(0, -1).every((s) => s < 2));
  assert.equal(report.timing.final_sample_started_at_seconds, starts.at(-1));
});

Deno.test("runDeletionContract() fails a surviving cache and reports cleanup incomplete", async () => {
  const { report } = await run({ staleCache: true });
  assert.equal(report.verdict, "FAIL");
  assert.deepEqual(codes(report, "fail"), [
    "marker_retrievable:retrieval",
    "residual_store:cache_records",
  ]);
  assert.match(
    report.findings[1]!.message,
    /cache_records stayed at 1 through the final sample at 2\.\d\d s/,
  );
  assert.equal(report.cleanup.cleanup_complete, false);
  assert.match(
    report.cleanup.problems.join(";"),
    /cache_records 1 left in the test namespace/,
  );
});

Deno.test("runDeletionContract() fails a vector that reappears after a clean early sample", async () => {
  const { report } = await run({ resurrectAtMs: 700 });
  assert.equal(report.verdict, "FAIL");
  assert.equal(report.samples[0]!.inventory?.vector_records, 0);
  const finding = report.findings.find((f) => f.subject === "vector_records")!;
  assert.equal(finding.severity, "fail");
  assert.match(finding.message, /read 0 at 0\.00 s but came back at 1\.00 s/);
  assert.equal(report.cleanup.cleanup_complete, true);
});

Deno.test("runDeletionContract() passes slow vector deletion with a transient residual", async () => {
  const { report } = await run({ vectorDelayMs: 800 });
  assert.equal(report.verdict, "PASS");
  assert.deepEqual(codes(report, "transient"), [
    "transient_residual:vector_records",
  ]);
  assert.match(
    report.findings[0]!.message,
    /vector_records was 3 from 0\.00 s to 0\.50 s and read 0 from 1\.\d\d s, inside the 2\.00 s window/,
  );
});

Deno.test("runDeletionContract() is inconclusive when the control is lost", async () => {
  const { report } = await run({ loseControl: true });
  assert.equal(report.verdict, "INCONCLUSIVE");
  assert.deepEqual(codes(report, "inconclusive"), ["control_lost:control"]);
});

Deno.test("runDeletionContract() is inconclusive on an incomplete inventory", async () => {
  const { report } = await run({ incomplete: true });
  assert.equal(report.verdict, "INCONCLUSIVE");
  assert.equal(report.baseline.ok, false);
  assert.equal(report.deletion, null, "nothing is deleted without a baseline");
  assert.match(report.baseline.problems.join(";"), /complete: false/);
  assert.equal(report.cleanup.cleanup_complete, false);
});

Deno.test("runDeletionContract() is inconclusive when a window request fails", async () => {
  const { report } = await run({ fail: { op: "query", afterDelete: true } });
  assert.equal(report.verdict, "INCONCLUSIVE");
  assert.ok(
    codes(report, "inconclusive").includes("request_error:observation"),
  );
  assert.equal(report.requests.failed > 0, true);
  assert.ok(report.samples.every((s) => s.marker_seen === null));
});

Deno.test("runDeletionContract() is inconclusive when ingest fails, and still cleans up issued ids", async () => {
  const { report, target } = await run({ fail: { op: "ingest" } });
  assert.equal(report.verdict, "INCONCLUSIVE");
  assert.match(report.baseline.problems[0]!, /^ingest failed/);
  const deletes = target.calls.filter((c) => c.op === "delete");
  assert.deepEqual(deletes.map((d) => d.body.ids), [[report.issued.test[0]]]);
});

Deno.test("runDeletionContract() refuses an adapter that rewrites ids", async () => {
  const { report } = await run({ rewriteIds: true });
  assert.equal(report.verdict, "INCONCLUSIVE");
  assert.match(report.baseline.problems[0]!, /supplied ids must be preserved/);
});

Deno.test("runDeletionContract() checkpoints every id before its ingest request", async () => {
  const clock = new VirtualClock();
  const target = new FakeTarget(clock);
  const seen: string[][] = [];
  const snapshots: string[][] = [];
  const report = await runDeletionContract(CONFIG, {
    transport: {
      post: (op, body) => {
        if (op === "ingest") seen.push([...snapshots.at(-1)!]);
        return target.post(op, body);
      },
    },
    target: { id: "fake", base_url: CONFIG.base_url, source: "config" },
    checkpoint: {
      location: "(test)",
      write: (checkpoint) => {
        snapshots.push([
          ...checkpoint.issued.test,
          ...checkpoint.issued.control,
        ]);
        return Promise.resolve();
      },
    },
    clock,
  });
  assert.equal(report.verdict, "PASS");
  const ingested = target.calls.filter((c) => c.op === "ingest").map((c) =>
    String(c.body.id)
  );
  ingested.forEach((id, i) =>
    assert.ok(seen[i]!.includes(id), `${id} checkpointed before ingest`)
  );
});

Deno.test("runDeletionContract() cleans up every issued id in both namespaces", async () => {
  const { report, target, checkpoint } = await run();
  const deletes = target.calls.filter((c) => c.op === "delete");
  assert.equal(
    deletes.length,
    3,
    "one test deletion and two cleanup deletions",
  );
  assert.deepEqual(deletes[1]!.body.ids, report.issued.test);
  assert.deepEqual(deletes[2]!.body.ids, report.issued.control);
  assert.equal(checkpoint.latest()?.state, "completed");
  assert.equal(checkpoint.latest()?.verdict, "PASS");
  // An interrupted run's later cleanup queries these from its checkpoint.
  assert.deepEqual(checkpoint.latest()?.markers, report.markers);
});

Deno.test("runDeletionContract() reports never contain document text or answer text, and keep the markers in markers alone", async () => {
  const sent: string[] = [];
  const queried = new Set<string>();
  const { report } = await runFake({
    behaviour: { staleCache: true },
    hook: async (request, forward) => {
      const answer = await forward();
      if (request.op === "ingest") sent.push(String(request.body.text));
      if (request.op === "query") {
        queried.add(String(request.body.query));
        sent.push(String(answer.text));
      }
      return answer;
    },
  });
  assert.equal(report.verdict, "FAIL", "the stale answers were read");
  // Answers that carry a marker are the ones a report could leak.
  const secrets = new Set(
    sent.filter((text) => text.includes("trace_canary_")),
  );
  assert.ok(secrets.size > report.issued.test.length, [...secrets].join());
  const json = JSON.stringify(report);
  for (const text of secrets) assert.ok(!json.includes(text), text);
  // The markers it queried are kept, for a later cleanup to query, and only there.
  assert.ok(report.markers);
  assert.deepEqual(
    new Set([report.markers.test, report.markers.control]),
    queried,
  );
  const { markers: _, ...rest } = report;
  assert.doesNotMatch(JSON.stringify(rest), /trace_canary_/);
});

Deno.test("runDeletionContract() turns an interrupted window into INCONCLUSIVE and still cleans up", async () => {
  const clock = new VirtualClock();
  const target = new FakeTarget(clock);
  const controller = new AbortController();
  const report = await runDeletionContract(CONFIG, {
    transport: target,
    target: { id: "fake", base_url: CONFIG.base_url, source: "config" },
    checkpoint: memoryCheckpointSink(),
    clock,
    signal: controller.signal,
    onEvent: (event) => {
      if (event.type === "sample" && event.sample.index === 1) {
        controller.abort();
      }
    },
  });
  assert.equal(report.verdict, "INCONCLUSIVE");
  assert.ok(codes(report, "inconclusive").includes("interrupted:window"));
  assert.equal(report.cleanup.cleanup_complete, true);
});
