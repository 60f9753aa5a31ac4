/** The engine under interruption, lost checkpoints, partial control inventories and ledger failures. */

import assert from "node:assert/strict";
import { parseStagingConfig } from "../lib/contract/config.ts";
import { openDb } from "../lib/db.ts";
import { memoryCheckpointSink } from "../lib/runner/checkpoint.ts";
import { runDeletionContract } from "../lib/runner/engine.ts";
import { runExternal } from "../lib/runs/external_run.ts";
import type { Operation } from "../lib/contract/protocol.ts";
import { FakeTarget, timeoutError, VirtualClock } from "./_fake_target.ts";
import { withTempDir } from "./_helpers.ts";

const CONFIG = parseStagingConfig({
  base_url: "http://127.0.0.1:1",
  environment: "staging",
  allow_synthetic_writes: true,
  deletion_window_seconds: 1,
  sample_interval_seconds: 0.5,
});
const TARGET = {
  id: "fake",
  base_url: CONFIG.base_url,
  source: "config",
} as const;

Deno.test("runDeletionContract() is inconclusive when only the control inventory is incomplete in the window", async () => {
  const clock = new VirtualClock();
  const target = new FakeTarget(clock);
  let deleted = false;
  const report = await runDeletionContract(CONFIG, {
    transport: {
      post: async (op, body) => {
        const answer = await target.post(op, body);
        if (op === "delete") deleted = true;
        const control = String(body.namespace).startsWith("trace-control-");
        return op === "inventory" && control && deleted
          ? { ...answer, complete: false }
          : answer;
      },
    },
    target: TARGET,
    checkpoint: memoryCheckpointSink(),
    clock,
  });
  assert.equal(report.verdict, "INCONCLUSIVE");
  const finding = report.findings.find((f) =>
    f.code === "control_inventory_incomplete"
  );
  assert.ok(finding, JSON.stringify(report.findings));
  assert.ok(!report.findings.some((f) => f.code === "erased"));
});

Deno.test("runDeletionContract() stops issuing ids when the checkpoint cannot be written, and cleans up", async () => {
  const clock = new VirtualClock();
  const target = new FakeTarget(clock);
  let writes = 0;
  const report = await runDeletionContract(CONFIG, {
    transport: target,
    target: TARGET,
    checkpoint: {
      location: "/full/disk/run.json",
      write: () => {
        writes++;
        return writes >= 3
          ? Promise.reject(new Error("No space left on device"))
          : Promise.resolve();
      },
    },
    clock,
  });
  assert.equal(report.verdict, "INCONCLUSIVE");
  assert.match(
    report.baseline.problems[0]!,
    /checkpoint \/full\/disk\/run\.json could not be written/,
  );
  const ingested = target.calls.filter((c) => c.op === "ingest").map((c) =>
    c.body.id
  );
  assert.equal(
    ingested.length,
    2,
    "the id whose checkpoint failed was never sent",
  );
  assert.deepEqual(report.issued.test, ingested);
  const cleanup = target.calls.filter((c) => c.op === "delete");
  assert.deepEqual(cleanup.map((c) => c.body.ids), [ingested]);
  assert.ok(report.findings.some((f) => f.code === "checkpoint_unwritten"));
});

Deno.test("runDeletionContract() interrupted during ingest skips deletion, cleans up and is inconclusive", async () => {
  const clock = new VirtualClock();
  const target = new FakeTarget(clock);
  const controller = new AbortController();
  const report = await runDeletionContract(CONFIG, {
    transport: {
      post: (op, body) => {
        if (op === "ingest" && target.calls.length === 1) controller.abort();
        return target.post(op, body);
      },
    },
    target: TARGET,
    checkpoint: memoryCheckpointSink(),
    clock,
    signal: controller.signal,
  });
  assert.equal(report.verdict, "INCONCLUSIVE");
  assert.equal(report.deletion, null);
  const finding = report.findings.find((f) => f.code === "interrupted");
  assert.match(finding?.message ?? "", /interrupted during ingest/);
  assert.equal(report.cleanup.cleanup_complete, true);
  assert.equal(report.issued.test.length, 2);
});

Deno.test("runDeletionContract() names the first sample that really read 0 after a failed one", async () => {
  const clock = new VirtualClock();
  const target = new FakeTarget(clock, { vectorDelayMs: 300 });
  let samples = 0;
  const report = await runDeletionContract(
    parseStagingConfig({ ...CONFIG, deletion_window_seconds: 1.5 }),
    {
      transport: {
        post: (op, body) => {
          const testInventory = op === "inventory" &&
            String(body.namespace).startsWith("trace-test-");
          if (
            testInventory && target.calls.some((c) => c.op === "delete")
          ) samples++;
          if (testInventory && samples === 2) {
            return Promise.reject(
              new Error("boom"),
            );
          }
          return target.post(op, body);
        },
      },
      target: TARGET,
      checkpoint: memoryCheckpointSink(),
      clock,
    },
  );
  const transient = report.findings.find((f) =>
    f.code === "transient_residual"
  );
  assert.ok(transient, JSON.stringify(report.findings));
  assert.match(transient.message, /read 0 from 1\.\d\d s/);
});

Deno.test("runExternal() keeps a completed report beside its checkpoint when the ledger cannot take it", async () => {
  await withTempDir(async (dataDir) => {
    const db = await openDb({ dataDir });
    try {
      const clock = new VirtualClock();
      const { report, recording } = await runExternal(CONFIG, {
        db,
        dataDir,
        target: TARGET,
        transport: new FakeTarget(clock),
        clock,
        trace: false,
      });
      assert.equal(report.verdict, "PASS");
      assert.equal(recording.kept_in, "file");
      assert.ok(recording.kept_in === "file");
      assert.equal(
        recording.path,
        `${dataDir}/external/${report.run_id}.report.json`,
      );
      assert.match(recording.reason, /ledger|no such table/i);
      const kept = JSON.parse(await Deno.readTextFile(recording.path));
      assert.equal(kept.verdict, "PASS");
    } finally {
      db.close();
    }
  });
});

Deno.test("a clean cleanup poll proves nothing when an ingest was not acknowledged or the baseline counted fewer records than were acknowledged", async (t) => {
  const run = async (
    post: (
      target: FakeTarget,
      op: Operation,
      body: Record<string, unknown>,
    ) => Promise<Record<string, unknown>>,
  ) => {
    const clock = new VirtualClock();
    const target = new FakeTarget(clock);
    return await runDeletionContract(CONFIG, {
      transport: { post: (op, body) => post(target, op, body) },
      target: TARGET,
      checkpoint: memoryCheckpointSink(),
      clock,
    });
  };
  await t.step("an ingest that timed out may still land", async () => {
    let ingests = 0;
    const report = await run((target, op, body) =>
      op === "ingest" && ++ingests === 2
        ? Promise.reject(timeoutError("ingest"))
        : target.post(op, body)
    );
    assert.equal(report.cleanup.cleanup_complete, false);
    assert.deepEqual(report.cleanup.problems, [
      "no poll can confirm the synthetic records are gone: an ingest was not acknowledged, so its write may still land; check later with trace external-cleanup",
    ]);
  });
  await t.step("an application that writes after acknowledging", async () => {
    let baselineRead = false;
    const report = await run(async (target, op, body) => {
      const answer = await target.post(op, body);
      // The records arrive after the baseline: it counts none of them.
      if (op === "inventory" && !baselineRead) {
        baselineRead = String(body.namespace).startsWith("trace-test-");
        return { ...answer, source_records: 0, vector_records: 0 };
      }
      return answer;
    });
    assert.equal(report.baseline.ok, false);
    assert.equal(report.cleanup.cleanup_complete, false);
    assert.match(
      report.cleanup.problems.join(),
      /the baseline counted fewer synthetic records than were acknowledged, so some may land later/,
    );
  });
  await t.step("acknowledged and counted: a clean poll is proof", async () => {
    const report = await run((target, op, body) => target.post(op, body));
    assert.equal(report.cleanup.cleanup_complete, true);
  });
});
