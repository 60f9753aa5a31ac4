/** The run use cases report what happened: where a report went, its trace, the regression it changed. */

import assert from "node:assert/strict";
import { ledgerHead } from "../lib/ledger/head.ts";
import { migrate, type TraceDb } from "../lib/db.ts";
import { NotFoundError } from "../lib/errors.ts";
import { LEDGER_MIGRATIONS } from "../lib/ledger/schema.ts";
import { registerTarget } from "../lib/ledger/targets.ts";
import { ALL_MIGRATIONS } from "../lib/migrations.ts";
import { listReferenceRuns } from "../lib/reference/history.ts";
import { findSystem } from "../lib/reference/systems.ts";
import {
  compareStoredRuns,
  replayRegression,
  RunBusyError,
  runExternal,
  runExternalTarget,
  RunLock,
  runReference,
  saveRun,
} from "../lib/runs/mod.ts";
import {
  type FakeBehaviour,
  FakeTarget,
  VirtualClock,
} from "./_fake_target.ts";
import { stagingConfig, withDb } from "./_helpers.ts";

const CONFIG = stagingConfig({ document_count: 2 });
const TARGET = {
  id: "staging-a",
  base_url: CONFIG.base_url,
  source: "registered",
} as const;

async function countTraceEvents(db: TraceDb, runId: string): Promise<number> {
  const result = await db.client.execute({
    sql: "SELECT COUNT(*) AS n FROM obs_events WHERE root_trace_id = ?",
    args: [runId],
  });
  return Number(result.rows[0]!.n);
}

function fakeRun(db: TraceDb, dataDir: string, behaviour: FakeBehaviour = {}) {
  const clock = new VirtualClock();
  return runExternal(CONFIG, {
    db,
    dataDir,
    target: TARGET,
    transport: new FakeTarget(clock, behaviour),
    clock,
    lock: new RunLock(),
  });
}

Deno.test("runExternal() says the report went to the ledger and how many trace events were written", async () => {
  await withDb(async (db, dataDir) => {
    await migrate(db, ALL_MIGRATIONS);
    const { report, recording, trace } = await fakeRun(db, dataDir);
    assert.equal(report.verdict, "PASS");
    assert.equal(recording.kept_in, "ledger");
    // The head right after the run: what its JUnit and summary files carry.
    assert.deepEqual(
      recording.kept_in === "ledger" && recording.head,
      await ledgerHead(db),
    );
    assert.equal(trace.status, "written");
    assert.ok(trace.status === "written");
    assert.ok(trace.events > 0);
    assert.equal(await countTraceEvents(db, report.run_id), trace.events);
  });
});

Deno.test("runExternal() keeps the verdict and the ledger row when the trace cannot be written", async () => {
  await withDb(async (db, dataDir) => {
    // A ledger without an observability index: the trace write must fail alone.
    await migrate(db, LEDGER_MIGRATIONS);
    const { report, recording, trace } = await fakeRun(db, dataDir, {
      staleCache: true,
    });
    assert.equal(report.verdict, "FAIL");
    assert.equal(recording.kept_in, "ledger");
    assert.equal(trace.status, "failed");
  });
});

Deno.test("runExternal() is refused before its checkpoint while another run holds the lock", async () => {
  await withDb(async (db, dataDir) => {
    await migrate(db, ALL_MIGRATIONS);
    const lock = new RunLock();
    const release = lock.acquire("run-20261129T100000Z-000000000000");
    const clock = new VirtualClock();
    const target = new FakeTarget(clock);
    await assert.rejects(
      () =>
        runExternal(CONFIG, {
          db,
          dataDir,
          target: TARGET,
          transport: target,
          clock,
          lock,
        }),
      (error: Error) =>
        error instanceof RunBusyError &&
        error.runningRunId === "run-20261129T100000Z-000000000000",
    );
    assert.equal(target.calls.length, 0);
    await assert.rejects(
      () => Deno.stat(`${dataDir}/external`),
      Deno.errors.NotFound,
    );
    release();
    assert.equal(lock.holder, null);
  });
});

Deno.test("runExternalTarget() registers a config target once and runs a registered one", async () => {
  await withDb(async (db, dataDir) => {
    await migrate(db, ALL_MIGRATIONS);
    const registered: string[] = [];
    const run = () => {
      const clock = new VirtualClock();
      return runExternalTarget(db, { config: CONFIG }, {
        dataDir,
        transport: new FakeTarget(clock),
        clock,
        trace: false,
        lock: new RunLock(),
        onRegistered: (target) => registered.push(target.id),
      });
    };
    const first = await run();
    const second = await run();
    assert.equal(first.registered, true);
    assert.equal(second.registered, false);
    assert.match(first.report.target.id, /^cfg-[0-9a-f]{12}$/);
    assert.deepEqual(registered, [first.report.target.id]);
    const clock = new VirtualClock();
    const byId = await runExternalTarget(db, {
      targetId: first.report.target.id,
    }, {
      dataDir,
      transport: new FakeTarget(clock),
      clock,
      trace: false,
      lock: new RunLock(),
    });
    assert.equal(byId.registered, false);
    assert.equal(byId.report.target.source, "config");
    await assert.rejects(
      () =>
        runExternalTarget(db, { targetId: "unknown" }, {
          dataDir,
          lock: new RunLock(),
        }),
      NotFoundError,
    );
  });
});

Deno.test("replayRegression() returns the regression its replay left, and the old one when the ledger refused the report", async () => {
  await withDb(async (db, dataDir) => {
    await migrate(db, ALL_MIGRATIONS);
    await registerTarget(db, {
      targetId: TARGET.id,
      config: CONFIG,
      source: "registered",
    });
    const fail = await fakeRun(db, dataDir, { staleCache: true });
    const { regression } = await saveRun(db, fail.report.run_id);
    const replay = async () => {
      const clock = new VirtualClock();
      return await replayRegression(db, regression.regression_id, {
        dataDir,
        transport: new FakeTarget(clock),
        clock,
        trace: false,
        lock: new RunLock(),
      });
    };
    const fixed = await replay();
    assert.equal(fixed.report.verdict, "PASS");
    assert.equal(fixed.recording.kept_in, "ledger");
    assert.equal(fixed.regression.status, "enforced");
    assert.equal(fixed.regression.replays, 1);
    assert.equal(fixed.regression.last_run_id, fixed.report.run_id);

    // A database that refuses every new entry (as a full disk would) can still be read.
    await db.client.execute(
      "CREATE TRIGGER refuse_entries BEFORE INSERT ON ledger_entries BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END",
    );
    const lost = await replay();
    assert.equal(lost.recording.kept_in, "file");
    assert.equal(lost.regression.status, "enforced");
    assert.equal(lost.regression.replays, 1, "an unrecorded replay counted");
    assert.equal(lost.regression.last_run_id, fixed.report.run_id);
  });
});

Deno.test("compareStoredRuns() compares two external runs and refuses a run it cannot find", async () => {
  await withDb(async (db, dataDir) => {
    await migrate(db, ALL_MIGRATIONS);
    const before = await fakeRun(db, dataDir, { staleCache: true });
    const after = await fakeRun(db, dataDir);
    const comparison = await compareStoredRuns(
      db,
      before.report.run_id,
      after.report.run_id,
    );
    assert.equal(comparison.a.verdict, "FAIL");
    assert.equal(comparison.b.verdict, "PASS");
    assert.ok(comparison.findings.fixed.length > 0);
    await assert.rejects(
      () =>
        compareStoredRuns(
          db,
          before.report.run_id,
          "run-20261129T100000Z-000000000000",
        ),
      /no completed external run run-20261129T100000Z-000000000000/,
    );
  });
});

Deno.test("runReference() records each system in reference history with its trace", async () => {
  await withDb(async (db) => {
    await migrate(db, ALL_MIGRATIONS);
    const seen: string[] = [];
    const runs = await runReference(db, {
      systems: [findSystem("correct")!, findSystem("stale-cache")!],
      onResult: (run) => void seen.push(run.system),
    });
    assert.deepEqual(seen, ["correct", "stale-cache"]);
    assert.deepEqual(runs.map((r) => r.report.verdict), ["PASS", "FAIL"]);
    for (const run of runs) {
      assert.ok(run.trace.status === "written");
      assert.equal(
        await countTraceEvents(db, run.report.run_id),
        run.trace.events,
      );
    }
    const history = await listReferenceRuns(db);
    assert.deepEqual(
      history.map((e) => e.run_id),
      runs.map((r) => r.report.run_id).reverse(),
    );
    const untraced = await runReference(db, {
      systems: [findSystem("correct")!],
      trace: false,
    });
    assert.deepEqual(untraced[0]!.trace, { status: "off" });
    assert.equal(await countTraceEvents(db, untraced[0]!.report.run_id), 0);
  });
});
