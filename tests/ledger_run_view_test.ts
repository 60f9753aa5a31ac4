import assert from "node:assert/strict";
import { viewRun } from "../lib/runs/run_view.ts";
import {
  type Checkpoint,
  fileCheckpointSink,
} from "../lib/runner/checkpoint.ts";
import { processIdentity } from "../lib/runner/process_identity.ts";
import { migrate } from "../lib/db.ts";
import { registerTarget } from "../lib/ledger/targets.ts";
import { ALL_MIGRATIONS } from "../lib/migrations.ts";
import { stagingConfig, withDb } from "./_helpers.ts";

function checkpoint(overrides: Partial<Checkpoint> = {}): Checkpoint {
  return {
    schema: "trace.checkpoint/1",
    run_id: "run-20261129T100000Z-aaaaaaaaaaaa",
    state: "running",
    pid: Deno.pid,
    process_identity: processIdentity(Deno.pid),
    started_at: "2026-11-29T10:00:00.000Z",
    updated_at: "2026-11-29T10:00:01.000Z",
    target: { id: "t", base_url: "http://127.0.0.1:1", source: "config" },
    regression_id: null,
    config_digest: "sha256:00",
    namespaces: { test: "trace-test-1", control: "trace-control-1" },
    issued: { test: ["trace-doc-1"], control: ["trace-doc-2"] },
    verdict: null,
    ...overrides,
  };
}

Deno.test({
  name:
    "viewRun() tells a live writer from a later process that reused its pid",
  ignore: Deno.build.os !== "linux",
  fn: async () => {
    await withDb(async (db, dataDir) => {
      const live = checkpoint();
      await fileCheckpointSink(dataDir, live.run_id).write(live);
      assert.equal(
        (await viewRun(db, live.run_id, { dataDir, ledger: false })).state,
        "running",
      );
      const reused = checkpoint({
        run_id: "run-20261129T100000Z-bbbbbbbbbbbb",
        process_identity: "other-boot:1",
      });
      await fileCheckpointSink(dataDir, reused.run_id).write(reused);
      const view = await viewRun(db, reused.run_id, { dataDir, ledger: false });
      assert.equal(view.state, "interrupted");
      assert.equal(view.verdict, "INCONCLUSIVE");
    });
  },
});

Deno.test("viewRun() refuses a kept report that is not a whole report (runs_unrecorded_test.ts shows whole ones)", async () => {
  await withDb(async (db, dataDir) => {
    const done = checkpoint({ state: "completed", verdict: "FAIL" });
    await fileCheckpointSink(dataDir, done.run_id).write(done);
    const report = {
      run_id: done.run_id,
      state: "completed",
      verdict: "FAIL",
      target: done.target,
    };
    await Deno.writeTextFile(
      `${dataDir}/external/${done.run_id}.report.json`,
      JSON.stringify(report),
    );
    await assert.rejects(
      () => viewRun(db, done.run_id, { dataDir, ledger: false }),
      /The report kept for run .* at .*\.report\.json cannot be trusted: /,
    );
  });
});

Deno.test("viewRun() refuses a damaged checkpoint with a one-line message", async () => {
  await withDb(async (db, dataDir) => {
    await Deno.mkdir(`${dataDir}/external`, { recursive: true });
    const runId = "run-20261129T100000Z-cccccccccccc";
    await Deno.writeTextFile(`${dataDir}/external/${runId}.json`, "{}");
    await assert.rejects(
      () => viewRun(db, runId, { dataDir, ledger: false }),
      /Checkpoint .* is damaged \(schema: .*\); restore or remove it/,
    );
    await Deno.writeTextFile(`${dataDir}/external/${runId}.json`, "{bad");
    await assert.rejects(
      () => viewRun(db, runId, { dataDir, ledger: false }),
      /Checkpoint .* is not valid JSON/,
    );
  });
});

Deno.test("viewRun() of an interrupted run sends to external-cleanup only when its target is registered", async () => {
  await withDb(async (db, dataDir) => {
    await migrate(db, ALL_MIGRATIONS);
    const config = stagingConfig();
    await registerTarget(db, {
      targetId: "staging-a",
      config,
      source: "registered",
    });
    // Its writer is gone: a second Ctrl-C, or a killed process.
    const gone = { pid: 0, process_identity: null };
    const registered = checkpoint({
      ...gone,
      target: { id: "staging-a", base_url: config.base_url, source: "config" },
    });
    await fileCheckpointSink(dataDir, registered.run_id).write(registered);
    const view = await viewRun(db, registered.run_id, { dataDir });
    assert.equal(view.target_registered, true);
    assert.match(
      view.note ?? "",
      new RegExp(
        `remove them with trace external-cleanup ${registered.run_id}$`,
      ),
    );

    // A quickstart run: a config target never registered, whose demo died with the command.
    const quickstart = checkpoint({
      ...gone,
      run_id: "run-20261129T100000Z-dddddddddddd",
      target: {
        id: "cfg-0123456789ab",
        base_url: "http://127.0.0.1:40000",
        source: "config",
      },
    });
    await fileCheckpointSink(dataDir, quickstart.run_id).write(quickstart);
    const unregistered = await viewRun(db, quickstart.run_id, { dataDir });
    assert.equal(unregistered.state, "interrupted");
    assert.equal(unregistered.target_registered, false);
    assert.equal(
      unregistered.note,
      "the run stopped before a completed report reached the ledger; 2 synthetic id(s) were issued; trace external-cleanup cannot remove them, as target cfg-0123456789ab was never registered and its adapter is unknown: a trace quickstart run used its in-process demo app, which kept the records in memory, so they ended with that command and nothing is left to remove; for an adapter that still runs, delete namespaces trace-test-1 and trace-control-1 with the application's own tools",
    );
  });
});
