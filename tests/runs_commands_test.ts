/**
 * The run commands people reach for: listing runs, showing what a saved
 * FAIL became, cleaning up after a run, seeing and retiring targets, and
 * read commands on an empty data directory.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { main } from "../cli.ts";
import { parseStagingConfig } from "../lib/contract/config.ts";
import { renderReport } from "../cli/_report_text.ts";
import { type DemoServer, startDemoServer } from "../cli/demo.ts";
import { migrate, type TraceDb } from "../lib/db.ts";
import { RefusedError } from "../lib/errors.ts";
import { saveRegression } from "../lib/ledger/regressions.ts";
import { registerTarget } from "../lib/ledger/targets.ts";
import { retireTarget } from "../lib/ledger/retirements.ts";
import { ALL_MIGRATIONS } from "../lib/migrations.ts";
import { findSystem } from "../lib/reference/systems.ts";
import type { RunReport } from "../lib/runner/report.ts";
import { closedPort } from "./_tcp_servers.ts";
import { canaryText, controlText } from "../lib/runner/ids.ts";
import { newMarker } from "../lib/runner/marker/mod.ts";
import { cleanUpRun } from "../lib/runs/cleanup.ts";
import { recordCleanup } from "../lib/ledger/cleanups.ts";
import { runCatalog } from "../lib/runs/run_catalog.ts";
import { runExternal } from "../lib/runs/external_run.ts";
import { configTargetRef } from "../lib/runs/targets.ts";
import { runReference } from "../lib/runs/reference_runs.ts";
import { RunLock } from "../lib/runs/run_lock.ts";
import {
  type FakeBehaviour,
  FakeTarget,
  VirtualClock,
} from "./_fake_target.ts";
import { captureIo, stagingConfig, withDb, withTempDir } from "./_helpers.ts";
import { recordLaterCleanup } from "./_later_cleanup.ts";
import { interruptedCheckpoint } from "./_unrecorded.ts";

const CONFIG = stagingConfig({ document_count: 2 });
const TARGET = {
  id: "staging-a",
  base_url: CONFIG.base_url,
  source: "registered",
} as const;

async function trace(args: string[]) {
  const io = captureIo();
  const code = await main(args, io);
  return { code, out: io.stdout(), err: io.stderr() };
}

/** `trace external-compare A B` on `db`'s data, with `flags`. */
async function compareRuns(
  db: TraceDb,
  a: { run_id: string },
  b: { run_id: string },
  ...flags: string[]
) {
  return await trace([
    "external-compare",
    a.run_id,
    b.run_id,
    ...flags,
    ...dataOf(db),
  ]);
}

function dataOf(db: TraceDb): string[] {
  return ["--data-dir", db.path!.replace(/\/trace\.db$/, "")];
}

async function setUp(db: TraceDb): Promise<void> {
  await migrate(db, ALL_MIGRATIONS);
  await registerTarget(db, {
    targetId: TARGET.id,
    config: CONFIG,
    source: "registered",
  });
}

async function fakeRun(
  db: TraceDb,
  dataDir: string,
  behaviour: FakeBehaviour = {},
  target: typeof TARGET | ReturnType<typeof configTargetRef> = TARGET,
): Promise<RunReport> {
  const clock = new VirtualClock();
  return (await runExternal(CONFIG, {
    db,
    dataDir,
    target,
    transport: new FakeTarget(clock, behaviour),
    clock,
    trace: false,
    lock: new RunLock(),
  })).report;
}

Deno.test("external-runs and the run pages agree on each run's cleanup after later cleanups", async () => {
  await withDb(async (db, dir) => {
    await setUp(db);
    const fail = await fakeRun(db, dir, { staleCache: true });
    const interrupted = "run-20990101T000000Z-000000000002";
    await interruptedCheckpoint(dir, interrupted, {
      test: ["trace-doc-2"],
      control: [],
    });
    const untouched = "run-20990101T000000Z-000000000003";
    await interruptedCheckpoint(dir, untouched, {
      test: ["trace-doc-3"],
      control: [],
    });
    // A later cleanup of the interrupted run that left records behind.
    await recordCleanup(db, {
      schema: "trace.cleanup/1",
      cleanup_id: "cleanup-1",
      run_id: interrupted,
      target_id: fail.target.id,
      ids_from: "checkpoint",
      namespaces: { test: "trace-test-x", control: "trace-control-x" },
      issued: { test: 1, control: 0 },
      started_at: "2099-01-01T00:01:00.000Z",
      finished_at: "2099-01-01T00:01:01.000Z",
      outcome: fail.cleanup,
    });
    const listed = JSON.parse(
      (await trace(["external-runs", "--json", ...dataOf(db)])).out,
    ).runs as { run_id: string; cleanup: string }[];
    const paged = await runCatalog(db, { dataDir: dir });
    const expected = {
      [fail.run_id]: "incomplete",
      [interrupted]: "incomplete",
      [untouched]: "unknown",
    };
    for (const [runId, cleanup] of Object.entries(expected)) {
      assert.equal(listed.find((r) => r.run_id === runId)?.cleanup, cleanup);
      assert.equal(paged.find((r) => r.run_id === runId)?.cleanup, cleanup);
    }
  });
});

Deno.test("external-show of a run a later cleanup completed no longer sends anyone to clean it up", async () => {
  await withDb(async (db, dir) => {
    await setUp(db);
    const fail = await fakeRun(db, dir, { staleCache: true });
    assert.equal(fail.cleanup.cleanup_complete, false);
    const command = `trace external-cleanup ${fail.run_id}`;
    const before = await trace(["external-show", fail.run_id, ...dataOf(db)]);
    assert.match(before.out, /^ {2}Remove the remaining synthetic records/m);
    const later = (cleanupId: string, complete: boolean) =>
      recordLaterCleanup(db, fail, cleanupId, { complete });
    // Still incomplete after a later try: the command is still the next step.
    await later("cleanup-1", false);
    const retried = await trace(["external-show", fail.run_id, ...dataOf(db)]);
    assert.ok(retried.out.includes(command), retried.out);
    // As recorded before runs kept their markers: the inventories only.
    await recordLaterCleanup(db, fail, "cleanup-2", {
      complete: true,
      markersQueried: false,
    });
    const cleared = await trace(["external-show", fail.run_id, ...dataOf(db)]);
    assert.ok(!cleared.out.includes(command), cleared.out);
    assert.match(
      cleared.out,
      /^ {2}A later trace external-cleanup \(cleanup-2\) deleted every id this run issued and both inventories read 0; retrieval was not checked \(this run's markers were not kept\)/m,
    );
    assert.match(
      cleared.out,
      /^Later cleanup cleanup-2 \(\S+\): inventories clear \(every store of both namespaces read 0; retrieval not checked\)$/m,
    );
    await later("cleanup-3", true);
    const shown = await trace(["external-show", fail.run_id, ...dataOf(db)]);
    assert.equal(shown.code, 1, shown.err);
    assert.ok(!shown.out.includes(command), shown.out);
    assert.doesNotMatch(shown.out, /Remove the remaining|retry with/);
    // The run's own cleanup is still reported as it was: incomplete.
    assert.match(shown.out, /^Cleanup {2}INCOMPLETE /m);
    assert.match(
      shown.out,
      /^ {2}A later trace external-cleanup \(cleanup-3\) deleted every id this run issued: every store of both namespaces read 0 and neither marker was retrievable$/m,
    );
    assert.match(
      shown.out,
      /^Later cleanup cleanup-3 \(\S+\): complete \(every store of both namespaces read 0 and neither marker was retrievable\)$/m,
    );
    assert.doesNotMatch(shown.out, /retrieval was not checked/);
  });
});

Deno.test("external-compare says what a later cleanup of either run found, as external-show and external-runs do", async () => {
  await withDb(async (db, dir) => {
    await setUp(db);
    const fail = await fakeRun(db, dir, { staleCache: true });
    const pass = await fakeRun(db, dir);
    const compare = async () => {
      const text = await compareRuns(db, fail, pass);
      const json = await compareRuns(db, fail, pass, "--json");
      assert.equal(json.code, 0, json.err);
      return { text: text.out, cleanup: JSON.parse(json.out).cleanup };
    };
    const before = await compare();
    assert.equal(before.cleanup.a.cleanup_complete, false);
    assert.equal(before.cleanup.a.later_cleanup, null);
    assert.doesNotMatch(before.text, /later trace external-cleanup/);
    await recordLaterCleanup(db, fail, "cleanup-2", { complete: true });
    const after = await compare();
    // The run's own cleanup stays as it was; the later one is beside it.
    assert.equal(after.cleanup.a.cleanup_complete, false);
    assert.deepEqual(after.cleanup.a.later_cleanup, {
      cleanup_id: "cleanup-2",
      finished_at: "2099-01-01T00:01:01.000Z",
      status: "complete",
      cleanup_complete: true,
      markers_queried: true,
      marker_seen: { test: false, control: false },
      delete_requests: 2,
      delete_requests_acknowledged: 2,
      deleted_ids: fail.issued.test.length + fail.issued.control.length,
      ids_to_delete: fail.issued.test.length + fail.issued.control.length,
      problems: [],
    });
    assert.equal(after.cleanup.b.later_cleanup, null);
    assert.match(
      after.text,
      /^ {2}A {2}INCOMPLETE: .*; a later trace external-cleanup \(cleanup-2\) completed it: every store at 0, neither marker retrievable$/m,
    );
    // A later cleanup as recorded before runs kept their markers says less.
    await recordLaterCleanup(db, fail, "cleanup-3", {
      complete: true,
      markersQueried: false,
      at: "2099-01-01T00:02:00.000Z",
    });
    const older = await compare();
    assert.equal(older.cleanup.a.later_cleanup.markers_queried, false);
    assert.equal(older.cleanup.a.later_cleanup.status, "inventories_clear");
    assert.match(
      older.text,
      /^ {2}A {2}INCOMPLETE: .*; a later trace external-cleanup \(cleanup-3\) found both inventories at 0 \(retrieval not checked\)$/m,
    );
    // A later cleanup that found the stale cache still serving the text.
    assert.equal(fail.cleanup.marker_seen.test, true);
    await recordLaterCleanup(db, fail, "cleanup-4", {
      complete: false,
      at: "2099-01-01T00:03:00.000Z",
    });
    assert.match(
      (await compare()).text,
      /^ {2}A {2}INCOMPLETE: .*; a later trace external-cleanup \(cleanup-4\) still left: .* \(the application still serves the run's text: fix its delete path before another cleanup\)$/m,
    );
  });
});

Deno.test("external-compare names the command that removes what a run's cleanup left, with the data flags", async () => {
  await withDb(async (db, dir) => {
    await setUp(db);
    const fail = await fakeRun(db, dir, { staleCache: true });
    const pass = await fakeRun(db, dir);
    const compare = async () => {
      const text = await compareRuns(db, fail, pass);
      assert.equal(text.code, 0, text.err);
      return text.out;
    };
    const command = `trace external-cleanup ${fail.run_id} --data-dir ${dir}`;
    const before = await compare();
    assert.ok(
      before.endsWith(
        ` Inspect and remove old residuals separately.\n  Run A's cleanup was incomplete: remove what it left with ${command}\n`,
      ),
      before,
    );
    assert.ok(!before.includes(`external-cleanup ${pass.run_id}`), before);
    // A later cleanup that found the text still served: fix it first.
    await recordLaterCleanup(db, fail, "cleanup-1", { complete: false });
    const served = await compare();
    assert.match(
      served,
      new RegExp(
        `^ {2}Run A's later cleanup cleanup-1 found the application still serving this run's text after deleting it: fix the application's delete path .*, then run ${command} again to confirm$`,
        "m",
      ),
    );
    // Once a later cleanup completed, nothing is left to name.
    await recordLaterCleanup(db, fail, "cleanup-2", {
      complete: true,
      at: "2099-01-01T00:02:00.000Z",
    });
    const cleaned = await compare();
    assert.doesNotMatch(cleaned, /Run A's/);
    assert.ok(!cleaned.includes(`external-cleanup ${fail.run_id}`), cleaned);
  });
});

Deno.test("external-compare of config runs never registered does not send their leftovers to external-cleanup", async () => {
  await withDb(async (db, dir) => {
    await migrate(db, ALL_MIGRATIONS);
    const target = configTargetRef(CONFIG);
    const fail = await fakeRun(db, dir, { staleCache: true }, target);
    const pass = await fakeRun(db, dir, {}, target);
    const text = await compareRuns(db, fail, pass);
    assert.equal(text.code, 0, text.err);
    assert.ok(!text.out.includes("trace external-cleanup run-"), text.out);
    assert.match(
      text.out,
      new RegExp(
        `^ {2}Run A's cleanup was incomplete, and trace external-cleanup cannot remove them, as target ${target.id} was never registered`,
        "m",
      ),
    );
    const json = await compareRuns(db, fail, pass, "--json");
    assert.equal(JSON.parse(json.out).target_registered, false);
  });
});

Deno.test("external-run and external-show of a soft-delete run name the cleanup command once, in the Cleanup section", async () => {
  await withTempDir(async (dir) => {
    const demo = await startDemoServer({ defect: "soft-delete" });
    try {
      const data = ["--data-dir", `${dir}/data`];
      const config = await demoConfig(dir, demo.url);
      const run = await trace(["external-run", "--config", config, ...data]);
      assert.equal(run.code, 1, run.err);
      const runId = /^FAIL {2}(\S+) /.exec(run.out)?.[1];
      assert.ok(runId, run.out);
      const command = `trace external-cleanup ${runId} --data-dir ${dir}/data`;
      const line =
        `^ {2}Remove the remaining synthetic records \\(namespaces \\S+ and \\S+\\) with: ${command}$`;
      const once = (text: string) => {
        assert.equal(
          text.split(`trace external-cleanup ${runId}`).length,
          2,
          text,
        );
        assert.match(text, new RegExp(line, "m"));
      };
      once(run.out + run.err);
      const shown = await trace(["external-show", runId, ...data]);
      assert.equal(shown.code, 1, shown.err);
      once(shown.out + shown.err);
      assert.doesNotMatch(shown.out, /its cleanup was incomplete/);
      // The view's note still says it, for --json and the run page.
      const view = JSON.parse(
        (await trace(["external-show", runId, "--json", ...data])).out,
      );
      assert.equal(
        view.note,
        `its cleanup was incomplete: remove what is left with trace external-cleanup ${runId}`,
      );
    } finally {
      await demo.shutdown();
    }
  });
});

Deno.test("a checkpoint copied under another run's name is refused, not shown, cleaned up or skipped as that run", async () => {
  await withDb(async (db, dir) => {
    await setUp(db);
    await fakeRun(db, dir);
    const original = "run-20990101T000000Z-000000000002";
    const copy = "run-20990101T000000Z-000000000003";
    await interruptedCheckpoint(dir, original, {
      test: ["trace-doc-2"],
      control: [],
    });
    await Deno.copyFile(
      `${dir}/external/${original}.json`,
      `${dir}/external/${copy}.json`,
    );
    const refusal = new RegExp(
      `Checkpoint \\S*/external/${copy}\\.json is of run ${original}, not ${copy} \\(copied or renamed\\); restore or remove it`,
    );
    const shown = await trace(["external-show", copy, ...dataOf(db)]);
    assert.equal(shown.code, 2);
    assert.match(shown.err, refusal);
    const cleanup = await trace(["external-cleanup", copy, ...dataOf(db)]);
    assert.equal(cleanup.code, 2);
    assert.match(cleanup.err, refusal);
    const listed = JSON.parse(
      (await trace(["external-runs", "--json", ...dataOf(db)])).out,
    );
    assert.ok(
      !listed.runs.some((r: { run_id: string }) => r.run_id === copy),
      "the copy is not listed as a run",
    );
    assert.ok(
      listed.unreadable.some((p: string) => p.endsWith(`${copy}.json`)),
    );
    const judged = await trace(["external-gate", ...dataOf(db)]);
    assert.equal(judged.code, 2);
    assert.match(judged.err, new RegExp(`${copy}\\.json cannot be read`));
    // The original still reads as itself.
    const own = await trace(["external-show", original, ...dataOf(db)]);
    assert.equal(own.code, 2);
    assert.match(own.out, new RegExp(`INCONCLUSIVE  ${original}`));
  });
});

Deno.test("trace external-runs lists external, reference and interrupted runs newest first, with filters", async () => {
  await withDb(async (db, dir) => {
    await setUp(db);
    const pass = await fakeRun(db, dir);
    const fail = await fakeRun(db, dir, { staleCache: true });
    const { regression } = await saveRegression(db, fail.run_id);
    await runReference(db, { systems: [findSystem("correct")!], trace: false });
    await interruptedCheckpoint(dir, "run-20990101T000000Z-000000000001", {
      test: ["trace-doc-1"],
      control: [],
    });
    const listed = await trace(["external-runs", "--json", ...dataOf(db)]);
    assert.equal(listed.code, 0, listed.err);
    const { schema, runs } = JSON.parse(listed.out);
    assert.equal(schema, "trace.run-list/1");
    assert.equal(runs.length, 4);
    assert.deepEqual(
      runs.map((r: { started_at: string }) => r.started_at),
      runs.map((r: { started_at: string }) => r.started_at).sort().reverse(),
    );
    const interrupted = runs[0];
    assert.deepEqual(
      [interrupted.state, interrupted.verdict, interrupted.kept_in],
      ["interrupted", "INCONCLUSIVE", "checkpoint"],
    );
    const failed = runs.find((r: { run_id: string }) =>
      r.run_id === fail.run_id
    );
    assert.equal(failed.saved_as, regression.regression_id);
    assert.equal(failed.cleanup, "incomplete");
    const filter = async (...flags: string[]) =>
      JSON.parse(
        (await trace(["external-runs", "--json", ...flags, ...dataOf(db)])).out,
      ).runs.map((r: { run_id: string }) => r.run_id);
    assert.deepEqual(await filter("--verdict", "fail"), [fail.run_id]);
    assert.deepEqual(
      await filter("--verdict", "FAIL", "--limit", "1"),
      [fail.run_id],
      "the limit counts the runs that match, not the newest runs",
    );
    assert.deepEqual(await filter("--verdict", "PASS", "--kind", "external"), [
      pass.run_id,
    ]);
    assert.equal((await filter("--kind", "reference")).length, 1);
    assert.deepEqual(await filter("--state", "interrupted"), [
      "run-20990101T000000Z-000000000001",
    ]);
    assert.deepEqual(
      (await filter("--target", TARGET.id)).length,
      3,
      "two completed and the interrupted run",
    );
    assert.deepEqual(
      await filter("--target", TARGET.id, "--verdict", "RUNNING"),
      [],
      "a known target with no run matching the other filters lists nothing",
    );
    const typo = await trace([
      "external-runs",
      "--target",
      `${TARGET.id}x`,
      ...dataOf(db),
    ]);
    assert.equal(typo.code, 2);
    assert.equal(
      typo.err,
      `trace external-runs: No target "${TARGET.id}x" is registered or has a run; did you mean "${TARGET.id}"? trace external-targets --all lists the targets\n`,
    );
    const text = await trace(["external-runs", ...dataOf(db)]);
    assert.match(text.out, /^RUN +VERDICT +STATE +KIND +TARGET/);
    assert.match(
      text.out,
      new RegExp(
        `${fail.run_id} +FAIL +completed +external +staging-a .* incomplete +saved as ${regression.regression_id}`,
      ),
    );
    const bad = await trace([
      "external-runs",
      "--verdict",
      "maybe",
      ...dataOf(db),
    ]);
    assert.equal(bad.code, 2);
    assert.match(
      bad.err,
      /--verdict must be one of PASS, FAIL, INCONCLUSIVE, RUNNING/,
    );
  });
});

Deno.test("trace external-show says which regression a saved FAIL became", async () => {
  await withDb(async (db, dir) => {
    await setUp(db);
    const fail = await fakeRun(db, dir, { staleCache: true });
    const { regression } = await saveRegression(db, fail.run_id);
    const json = await trace([
      "external-show",
      fail.run_id,
      "--json",
      ...dataOf(db),
    ]);
    assert.equal(JSON.parse(json.out).saved_as, regression.regression_id);
    const text = await trace(["external-show", fail.run_id, ...dataOf(db)]);
    assert.match(
      text.out,
      new RegExp(`^Saved as regression ${regression.regression_id}\n`),
    );
  });
});

Deno.test("cleanUpRun() deletes an interrupted run's issued ids, polls, and appends a cleanup entry to the chain", async () => {
  await withDb(async (db, dir) => {
    await setUp(db);
    const clock = new VirtualClock();
    const target = new FakeTarget(clock);
    const runId = "run-20990101T000000Z-000000000002";
    const checkpoint = await interruptedCheckpoint(dir, runId, {
      test: ["trace-doc-1", "trace-doc-2"],
      control: ["trace-doc-3"],
    });
    for (
      const [ns, id] of [["trace-test-x", "trace-doc-1"], [
        "trace-test-x",
        "trace-doc-2",
      ], ["trace-control-x", "trace-doc-3"]]
    ) {
      await target.post("ingest", { namespace: ns, id, text: "synthetic" });
    }
    const outcome = await cleanUpRun(db, runId, {
      dataDir: dir,
      transport: target,
      clock,
    });
    assert.equal(outcome.status, "inventories_clear");
    assert.ok(
      outcome.status === "inventories_clear" && "seq" in outcome.recorded,
    );
    assert.equal(outcome.record.ids_from, "checkpoint");
    assert.deepEqual(outcome.record.issued, { test: 2, control: 1 });
    assert.equal(outcome.record.outcome.cleanup_complete, true);
    const deletes = target.calls.filter((c) => c.op === "delete");
    assert.deepEqual(deletes.map((c) => c.body), [
      { namespace: "trace-test-x", ids: checkpoint.issued.test },
      { namespace: "trace-control-x", ids: checkpoint.issued.control },
    ]);
    const show = await trace(["external-show", runId, "--json", ...dataOf(db)]);
    const view = JSON.parse(show.out);
    assert.equal(view.cleanup.cleanup_id, outcome.record.cleanup_id);
    assert.match(
      view.note,
      /deleted them on \S+ and both inventories read 0 \(retrieval was not checked/,
    );
    const again = await cleanUpRun(db, runId, {
      dataDir: dir,
      transport: target,
      clock,
    });
    assert.equal(again.status, "not_needed");
    assert.match(
      again.status === "not_needed" ? again.reason : "",
      /had every deletion acknowledged and every store of both namespaces read 0 \(its markers were not kept, so retrieval was not checked\)/,
    );
    const verify = await trace(["ledger", "verify", "--json", ...dataOf(db)]);
    assert.equal(JSON.parse(verify.out).ok, true);
  });
});

Deno.test("cleanUpRun() records what stays when the application keeps the records, and refuses runs it must not touch", async () => {
  await withDb(async (db, dir) => {
    await setUp(db);
    const clock = new VirtualClock();
    const leaky = new FakeTarget(clock, { staleCache: true });
    const fail = (await runExternal(CONFIG, {
      db,
      dataDir: dir,
      target: TARGET,
      transport: leaky,
      clock,
      trace: false,
      lock: new RunLock(),
    })).report;
    assert.equal(fail.cleanup.cleanup_complete, false);
    assert.match(
      renderReport(fail),
      new RegExp(`trace external-cleanup ${fail.run_id}$`, "m"),
    );
    assert.match(
      renderReport(fail, { dataFlags: " --data-dir /d" }),
      new RegExp(`trace external-cleanup ${fail.run_id} --data-dir /d$`, "m"),
      "the command names the data it was run on",
    );
    const outcome = await cleanUpRun(db, fail.run_id, {
      dataDir: dir,
      transport: leaky,
      clock,
    });
    // What stays is said by the status too, not only deep in the record.
    assert.ok(outcome.status === "incomplete");
    assert.equal(outcome.record.ids_from, "report");
    assert.equal(outcome.record.outcome.cleanup_complete, false);
    assert.match(
      outcome.record.outcome.problems.join("; "),
      /cache_records 1 left in the test namespace/,
    );

    const [reference] = await runReference(db, {
      systems: [findSystem("stale-cache")!],
      trace: false,
    });
    const none = await cleanUpRun(db, reference!.report.run_id, {
      dataDir: dir,
    });
    assert.equal(none.status, "not_needed");
    assert.match(
      none.status === "not_needed" ? none.reason : "",
      /reference run: its system lived in memory/,
    );

    const running = "run-20990101T000000Z-000000000003";
    await interruptedCheckpoint(dir, running, {
      test: ["trace-doc-9"],
      control: [],
    });
    await assert.rejects(
      () => cleanUpRun(db, running, { dataDir: dir, isAlive: () => true }),
      (error: Error) =>
        error instanceof RefusedError &&
        /process 0 is still running it/.test(error.message),
    );
  });
});

async function withDemo<T>(fn: (demo: DemoServer) => Promise<T>): Promise<T> {
  const demo = await startDemoServer({ defect: null });
  try {
    return await fn(demo);
  } finally {
    await demo.shutdown();
  }
}

Deno.test("trace external-cleanup removes what a killed run left in the demo and records it", async () => {
  await withTempDir(async (dir) => {
    await withDemo(async (demo) => {
      const data = `${dir}/data`;
      const config = `${dir}/c.json`;
      await Deno.writeTextFile(
        config,
        JSON.stringify({
          base_url: demo.url,
          environment: "staging",
          allow_synthetic_writes: true,
          document_count: 2,
          deletion_window_seconds: 0.3,
          sample_interval_seconds: 0.1,
        }),
      );
      assert.equal(
        (await trace([
          "external-register",
          "--target",
          "demo",
          "--config",
          config,
          "--data-dir",
          data,
        ])).code,
        0,
      );
      // What a killed run leaves: records in the app and a running
      // checkpoint of a dead process, written before checkpoints kept markers.
      const namespaces = {
        test: "trace-test-killed",
        control: "trace-control-killed",
      };
      const issued = {
        test: ["trace-doc-k1", "trace-doc-k2"],
        control: ["trace-doc-k3"],
      };
      for (const role of ["test", "control"] as const) {
        for (const id of issued[role]) {
          await fetch(`${demo.url}/ingest`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({
              namespace: namespaces[role],
              id,
              text: "Synthetic Trace canary",
            }),
          }).then((r) => r.body?.cancel());
        }
      }
      const runId = "run-20990101T000000Z-00000000000a";
      await interruptedCheckpoint(data, runId, issued, {
        target: { id: "demo", base_url: demo.url, source: "registered" },
        config: parseStagingConfig(
          JSON.parse(await Deno.readTextFile(config)),
        ),
        namespaces,
      });
      const shown = await trace(["external-show", runId, "--data-dir", data]);
      assert.match(
        shown.out,
        new RegExp(
          `remove them with trace external-cleanup ${runId} --data-dir ${data}$`,
          "m",
        ),
      );
      const before = JSON.parse(
        (await trace(["external-runs", "--json", "--data-dir", data])).out,
      ).runs;
      assert.equal(before[0].cleanup, "unknown");
      const cleaned = await trace([
        "external-cleanup",
        runId,
        "--data-dir",
        data,
      ]);
      assert.equal(cleaned.code, 0, cleaned.err);
      assert.match(
        cleaned.out,
        /^Cleanup of run \S+ \(ids from its checkpoint\): inventories clear \(every store of both namespaces read 0; retrieval not checked\)$/m,
      );
      // Polls are numbered from 1, as the run's own cleanup numbers them.
      assert.match(cleaned.err, /^cleanup poll #1 at /m);
      assert.doesNotMatch(cleaned.err, /poll #0/);
      for (const namespace of Object.values(namespaces)) {
        const inventory = await fetch(`${demo.url}/inventory`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ namespace }),
        }).then((r) => r.json());
        assert.equal(
          inventory.source_records + inventory.vector_records +
            inventory.cache_records,
          0,
        );
      }
      assert.match(
        cleaned.out,
        /\n {2}delete requests: 2\/2 acknowledged \(test 2 id\(s\), control 1 id\(s\)\), 3\/3 id\(s\) deleted; /,
      );
      assert.match(
        cleaned.out,
        /\n {2}markers: not queried \(this run's markers were not kept\), so whether the records can still be retrieved was not checked/,
      );
      const runs = JSON.parse(
        (await trace(["external-runs", "--json", "--data-dir", data])).out,
      ).runs;
      assert.equal(runs[0].run_id, runId);
      // An interrupted run reads inventories_clear once a later cleanup found them at 0, as a completed one does.
      assert.equal(runs[0].state, "interrupted");
      assert.equal(runs[0].cleanup, "inventories_clear");
      const again = await trace([
        "external-cleanup",
        runId,
        "--json",
        "--data-dir",
        data,
      ]);
      assert.equal(again.code, 0);
      assert.equal(JSON.parse(again.out).status, "not_needed");
    });
  });
});

Deno.test("trace external-cleanup of a killed run whose checkpoint kept its markers queries them and says complete", async () => {
  await withTempDir(async (dir) => {
    await withDemo(async (demo) => {
      const data = `${dir}/data`;
      const config = await demoConfig(dir, demo.url);
      const registered = await trace([
        "external-register",
        "--target",
        "demo",
        "--config",
        config,
        "--data-dir",
        data,
      ]);
      assert.equal(registered.code, 0, registered.err);
      const namespaces = {
        test: "trace-test-killed2",
        control: "trace-control-killed2",
      };
      const markers = { test: newMarker(), control: newMarker() };
      const issued = { test: ["trace-doc-m1"], control: ["trace-doc-m2"] };
      const post = (op: string, body: Record<string, unknown>) =>
        fetch(`${demo.url}/${op}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
        }).then((r) => r.json());
      await post("ingest", {
        namespace: namespaces.test,
        id: issued.test[0],
        text: canaryText(markers.test, 0, 1),
      });
      await post("ingest", {
        namespace: namespaces.control,
        id: issued.control[0],
        text: controlText(markers.control),
      });
      const before = await post("query", {
        namespace: namespaces.test,
        query: markers.test,
      });
      assert.ok(JSON.stringify(before).includes(markers.test));
      const runId = "run-20990101T000000Z-00000000000b";
      await interruptedCheckpoint(data, runId, issued, {
        target: { id: "demo", base_url: demo.url, source: "registered" },
        config: parseStagingConfig(
          JSON.parse(await Deno.readTextFile(config)),
        ),
        namespaces,
        markers,
      });
      const cleaned = await trace([
        "external-cleanup",
        runId,
        "--json",
        "--data-dir",
        data,
      ]);
      assert.equal(cleaned.code, 0, cleaned.err);
      const outcome = JSON.parse(cleaned.out);
      assert.equal(outcome.status, "complete");
      assert.equal(outcome.record.ids_from, "checkpoint");
      assert.equal(outcome.record.markers_queried, true);
      assert.deepEqual(outcome.record.outcome.marker_seen, {
        test: false,
        control: false,
      });
      // Requests and ids counted apart, as the run's own cleanup text counts them.
      assert.deepEqual(
        {
          delete_requests: outcome.delete_requests,
          delete_requests_acknowledged: outcome.delete_requests_acknowledged,
          deleted_ids: outcome.deleted_ids,
          ids_to_delete: outcome.ids_to_delete,
        },
        {
          delete_requests: 2,
          delete_requests_acknowledged: 2,
          deleted_ids: 2,
          ids_to_delete: 2,
        },
      );
      const runs = JSON.parse(
        (await trace(["external-runs", "--json", "--data-dir", data])).out,
      ).runs;
      assert.equal(runs[0].run_id, runId);
      assert.equal(runs[0].cleanup, "complete");
      const view = JSON.parse(
        (await trace(["external-show", runId, "--json", "--data-dir", data]))
          .out,
      );
      assert.equal(view.cleanup.markers_queried, true);
      assert.equal(view.cleanup.status, outcome.status);
      assert.match(
        view.note,
        /deleted them on \S+ and every store of both namespaces read 0 and neither marker was retrievable$/,
      );
    });
  });
});

Deno.test("trace external-targets shows each target's use; a retired target is hidden and refused for runs and replays", async () => {
  await withDb(async (db, dir) => {
    await setUp(db);
    const first = await fakeRun(db, dir, { staleCache: true });
    await fakeRun(db, dir);
    const { regression } = await saveRegression(db, first.run_id);
    const listed = JSON.parse(
      (await trace(["external-targets", "--json", ...dataOf(db)])).out,
    ).targets;
    assert.equal(listed.length, 1);
    assert.equal(listed[0].runs, 2);
    assert.equal(listed[0].base_url, CONFIG.base_url);
    assert.ok(listed[0].first_run_at <= listed[0].last_run_at);
    assert.equal(listed[0].retired, null);
    const text = await trace(["external-targets", ...dataOf(db)]);
    assert.match(
      text.out,
      /^ID +SOURCE +BASE URL +RUNS +FIRST RECORDED +LAST RECORDED\n/,
    );

    const retired = await trace([
      "external-retire",
      TARGET.id,
      "--reason",
      "moved to staging-b",
      ...dataOf(db),
    ]);
    assert.equal(retired.code, 0, retired.err);
    assert.match(retired.out, /^retired target staging-a \(ledger entry \d+\)/);
    assert.deepEqual(
      JSON.parse(
        (await trace(["external-targets", "--json", ...dataOf(db)])).out,
      ).targets,
      [],
    );
    const all = JSON.parse(
      (await trace(["external-targets", "--all", "--json", ...dataOf(db)]))
        .out,
    ).targets;
    assert.equal(all[0].retired.reason, "moved to staging-b");
    for (
      const [command, args] of [
        ["external-run", ["external-run", "--target", TARGET.id]],
        ["external-replay", ["external-replay", regression.regression_id]],
        ["external-plan", ["external-plan", "--target", TARGET.id]],
      ] as const
    ) {
      const refused = await trace([...args, ...dataOf(db)]);
      assert.equal(refused.code, 2, command);
      assert.match(
        refused.err,
        new RegExp(
          `^trace ${command}: Cannot .*: target "staging-a" was retired on \\S+ \\(ledger entry \\d+: moved to staging-b\\); register a new target id for new runs\\n$`,
        ),
      );
    }
    const again = await trace(["external-retire", TARGET.id, ...dataOf(db)]);
    assert.match(again.out, /already retired/);
    assert.equal((await trace(["ledger", "verify", ...dataOf(db)])).code, 0);
  });
});

Deno.test("trace external-retire refuses a reason past 500 characters and keeps the target usable; a long stored reason is clipped in refusals", async () => {
  await withDb(async (db) => {
    await setUp(db);
    const long = "r".repeat(501);
    const refused = await trace([
      "external-retire",
      TARGET.id,
      "--reason",
      long,
      ...dataOf(db),
    ]);
    assert.equal(refused.code, 2);
    assert.equal(
      refused.err,
      `trace external-retire: Cannot retire target "staging-a": the reason is 501 characters; give at most 500\n`,
    );
    const listed = JSON.parse(
      (await trace(["external-targets", "--json", ...dataOf(db)])).out,
    ).targets;
    assert.equal(listed[0].retired, null);
    // Within the bound, a refusal repeats only the first 80 characters.
    await retireTarget(db, TARGET.id, "r".repeat(400));
    const run = await trace([
      "external-plan",
      "--target",
      TARGET.id,
      ...dataOf(db),
    ]);
    assert.match(
      run.err,
      /\(ledger entry \d+: r{80}… \(400 characters\)\); register a new target id for new runs\n$/,
    );
  });
});

Deno.test("read commands on an empty data directory print a JSON error object with --json; the gate never passes vacuously", async () => {
  await withTempDir(async (dir) => {
    const empty = ["--data-dir", `${dir}/empty`];
    for (
      const args of [
        ["external-gate"],
        ["external-regressions"],
        ["external-targets"],
        ["external-runs"],
        ["external-show", "run-20990101T000000Z-000000000001"],
        ["ledger", "verify"],
        ["ledger", "head"],
      ]
    ) {
      const result = await trace([...args, "--json", ...empty]);
      assert.equal(result.code, 2, args.join(" "));
      const error = JSON.parse(result.out).error;
      assert.equal(error.code, "storage", args.join(" "));
      assert.match(error.message, /^No Trace data at .*empty\/trace\.db yet/);
      const command = args.filter((arg) => !arg.startsWith("run-")).join(" ");
      assert.equal(result.err, `trace ${command}: ${error.message}\n`);
    }
    assert.equal(
      await Deno.stat(`${dir}/empty`).then(() => true, () => false),
      false,
      "a reader created the data directory",
    );
    // An index but no ledger yet: still no pass.
    assert.equal(
      (await trace(["obs", "init", "--data-dir", `${dir}/obs`])).code,
      0,
    );
    const noLedger = await trace(["external-gate", "--data-dir", `${dir}/obs`]);
    assert.equal(noLedger.code, 2);
    assert.match(noLedger.err, /No ledger in .* yet/);
  });
  await withDb(async (db) => {
    // Every table, zero ledger entries (what any writing command leaves).
    await migrate(db, ALL_MIGRATIONS);
    const none = await trace(["external-gate", "--json", ...dataOf(db)]);
    assert.equal(none.code, 2);
    assert.match(
      JSON.parse(none.out).error.message,
      /^No external runs in the ledger at .* yet \(reference runs are not gated\), so the gate has nothing to judge/,
    );
    // A registration alone is not a run either.
    await setUp(db);
    const registered = await trace(["external-gate", ...dataOf(db)]);
    assert.equal(registered.code, 2);
    assert.match(registered.err, /No external runs in the ledger at .* yet/);
    await fakeRun(db, dataOf(db)[1]!);
    const gate = await trace(["external-gate", ...dataOf(db)]);
    assert.equal(gate.code, 0);
    assert.match(
      gate.out,
      /^gate passed: no enforced regression yet, so nothing can have come back/,
    );
  });
});

Deno.test("commands that act on recorded evidence never create a database: the gate does not pass on what they leave", async () => {
  await withTempDir(async (dir) => {
    const typo = ["--data-dir", `${dir}/typo`];
    for (
      const args of [
        ["external-save", "run-20990101T000000Z-000000000001"],
        ["external-cleanup", "run-20990101T000000Z-000000000001"],
        ["external-retire", "staging-a"],
        ["external-replay", "reg-20990101T000000Z-000000000001"],
        ["external-run", "--target", "staging-a"],
      ]
    ) {
      const result = await trace([...args, "--json", ...typo]);
      assert.equal(result.code, 2, args.join(" "));
      assert.match(
        JSON.parse(result.out).error.message,
        /^No Trace data at .*typo\/trace\.db yet/,
        args.join(" "),
      );
      assert.equal(
        await Deno.stat(`${dir}/typo`).then(() => true, () => false),
        false,
        `${args.join(" ")} created the data directory`,
      );
    }
    // A database holding only the index gains no ledger tables either.
    assert.equal(
      (await trace(["obs", "init", "--data-dir", `${dir}/obs`])).code,
      0,
    );
    const save = await trace([
      "external-save",
      "run-20990101T000000Z-000000000001",
      "--data-dir",
      `${dir}/obs`,
    ]);
    assert.equal(save.code, 2);
    assert.match(save.err, /No ledger in .* yet/);
    const gate = await trace(["external-gate", "--data-dir", `${dir}/obs`]);
    assert.equal(gate.code, 2);
    assert.match(gate.err, /No ledger in .* yet/);
  });
});

/**
 * Registers the adapter at `url` as target `id` in `${dir}/data` through
 * `trace external-register`; returns the data directory and what a
 * checkpoint of a run against it names ({@link interruptedCheckpoint}).
 */
async function registerAdapter(
  dir: string,
  id: string,
  url: string,
  config: Record<string, unknown> = {},
) {
  const data = `${dir}/data`;
  const file = `${dir}/c.json`;
  const body = {
    base_url: url,
    environment: "staging",
    allow_synthetic_writes: true,
    deletion_window_seconds: 0.3,
    sample_interval_seconds: 0.1,
    ...config,
  };
  await Deno.writeTextFile(file, JSON.stringify(body));
  const register = await trace([
    "external-register",
    "--target",
    id,
    "--config",
    file,
    "--data-dir",
    data,
  ]);
  assert.equal(register.code, 0, register.err);
  const run = {
    target: { id, base_url: url, source: "registered" as const },
    config: parseStagingConfig(body),
    namespaces: { test: `trace-test-${id}`, control: `trace-control-${id}` },
  };
  return { data, run };
}

Deno.test("trace external-cleanup against an adapter that is not running fails at once and records nothing", async () => {
  await withTempDir(async (dir) => {
    // A port where nothing listens any more.
    const gone = await startDemoServer({ defect: null });
    const url = gone.url;
    await gone.shutdown();
    const { data, run } = await registerAdapter(dir, "gone", url);
    const runId = "run-20990101T000000Z-00000000000b";
    await interruptedCheckpoint(data, runId, {
      test: ["trace-doc-g1", "trace-doc-g2"],
      control: [],
    }, run);
    const head = JSON.parse(
      (await trace(["ledger", "head", "--json", "--data-dir", data])).out,
    ).head;
    const cleanup = await trace([
      "external-cleanup",
      runId,
      "--json",
      "--data-dir",
      data,
    ]);
    assert.equal(cleanup.code, 2);
    // One line, no poll, nothing acknowledged or not: nothing was sent.
    assert.doesNotMatch(cleanup.err, /poll|acknowledged/);
    assert.equal(cleanup.err.split("\n").filter((l) => l !== "").length, 1);
    assert.match(
      cleanup.err,
      new RegExp(
        `^trace external-cleanup: Cannot clean up run ${runId}: the staging adapter at ${url} cannot be reached \\(.+\\); start it and run trace external-cleanup ${runId} again \\(nothing was deleted or recorded\\)\n$`,
      ),
    );
    assert.equal(JSON.parse(cleanup.out).error.code, "transport");
    const after = JSON.parse(
      (await trace(["ledger", "head", "--json", "--data-dir", data])).out,
    ).head;
    assert.equal(after, head, "a cleanup entry was recorded");
    const shown = JSON.parse(
      (await trace(["external-show", runId, "--json", "--data-dir", data]))
        .out,
    );
    assert.equal(shown.cleanup, null);
  });
});

Deno.test("trace external-cleanup names a refused deletion once, in words, not by its failure code", async () => {
  await withTempDir(async (dir) => {
    // An adapter that counts nothing and refuses every deletion.
    const adapter = Deno.serve(
      { port: 0, hostname: "127.0.0.1", onListen() {} },
      async (request) => {
        const op = new URL(request.url).pathname.slice(1);
        await request.body?.cancel();
        if (op === "delete") return new Response("busy", { status: 503 });
        return Response.json({
          source_records: 0,
          vector_records: 0,
          cache_records: 0,
          complete: true,
        });
      },
    );
    try {
      const url = `http://127.0.0.1:${adapter.addr.port}`;
      const { data, run } = await registerAdapter(dir, "refusing", url);
      const runId = "run-20990101T000000Z-00000000000c";
      await interruptedCheckpoint(data, runId, {
        test: ["trace-doc-r1"],
        control: [],
      }, run);
      const cleanup = await trace([
        "external-cleanup",
        runId,
        "--data-dir",
        data,
      ]);
      assert.match(
        cleanup.out,
        /delete requests: 0\/1 acknowledged \(test 1 id\(s\) NOT acknowledged\), 0\/1 id\(s\) deleted;/,
      );
      assert.doesNotMatch(cleanup.out, /\(http_status\)/);
      assert.match(
        cleanup.out,
        /\n {2}- the test deletion was not acknowledged: HTTP 503/,
      );
      // No marker was seen served: another cleanup later may still succeed.
      assert.ok(
        cleanup.out.endsWith(
          `\n  Some records may remain or still be served: check the namespaces with the application's own tools, or run trace external-cleanup ${runId} --data-dir ${data} again later\n`,
        ),
        cleanup.out,
      );
    } finally {
      await adapter.shutdown();
    }
  });
});

Deno.test("trace external-cleanup after a Ctrl-C calls off a deletion the adapter leaves hanging, records it as not acknowledged and exits 2", async () => {
  await withTempDir(async (dir) => {
    const ctrlC = new AbortController();
    const released = Promise.withResolvers<void>();
    // An adapter that counts nothing and never answers a deletion.
    const adapter = Deno.serve(
      { port: 0, hostname: "127.0.0.1", onListen() {} },
      async (request) => {
        const op = new URL(request.url).pathname.slice(1);
        await request.body?.cancel();
        if (op === "delete") {
          // The Ctrl-C arrives while the deletion is in flight.
          setTimeout(() => ctrlC.abort(), 0);
          await released.promise;
          return Response.json({ acknowledged: true });
        }
        return Response.json({
          source_records: 0,
          vector_records: 0,
          cache_records: 0,
          complete: true,
        });
      },
    );
    try {
      const url = `http://127.0.0.1:${adapter.addr.port}`;
      const { data, run } = await registerAdapter(dir, "hanging", url, {
        deletion_window_seconds: 1,
        sample_interval_seconds: 0.5,
        // Long enough that only the interrupt's bound ends the deletion.
        timeout_seconds: { delete: 60 },
      });
      const runId = "run-20990101T000000Z-00000000000d";
      await interruptedCheckpoint(data, runId, {
        test: ["trace-doc-h1"],
        control: [],
      }, run);
      const io = { ...captureIo(), interrupted: ctrlC.signal };
      const code = await main(
        ["external-cleanup", runId, "--data-dir", data],
        io,
      );
      assert.equal(code, 2, io.stderr());
      assert.match(
        io.stderr(),
        /cleanup interrupted: stopping within 5 s \(requests unanswered at the smaller of the window and 30 s are called off, and each one still to send gets 1 s\); the outcome so far is recorded \(Ctrl-C again exits at once\)\n/,
      );
      assert.match(
        io.stdout(),
        /: INCOMPLETE\n[^]*delete requests: 0\/1 acknowledged \(test 1 id\(s\) NOT acknowledged\), 0\/1 id\(s\) deleted; 1 inventory poll\(s\)/,
      );
      assert.match(
        io.stdout(),
        /\n {2}- the test deletion was not acknowledged: no answer within the 1 s left after the interrupt, so the request was called off\n/,
      );
      assert.match(io.stdout(), /\n {2}recorded as cleanup-\S+ in /);
    } finally {
      released.resolve();
      await adapter.shutdown();
    }
  });
});

Deno.test("a retired config-derived target is refused by external-plan --config and, before any connection, by external-run --config", async () => {
  await withDb(async (db, dir) => {
    await migrate(db, ALL_MIGRATIONS);
    const { configTargetId } = await import("../lib/runs/external_run.ts");
    const id = configTargetId(CONFIG);
    await registerTarget(db, {
      targetId: id,
      config: CONFIG,
      source: "config",
    });
    const retire = await trace(["external-retire", id, ...dataOf(db)]);
    assert.equal(retire.code, 0, retire.err);
    const file = `${dir}/staging.json`;
    // The adapter of CONFIG (127.0.0.1:1) is not running.
    await Deno.writeTextFile(
      file,
      JSON.stringify({
        base_url: CONFIG.base_url,
        environment: "staging",
        allow_synthetic_writes: true,
        document_count: 2,
        deletion_window_seconds: 2,
        sample_interval_seconds: 0.5,
      }),
    );
    for (const command of ["external-plan", "external-run"]) {
      const refused = await trace([command, "--config", file, ...dataOf(db)]);
      assert.equal(refused.code, 2, command);
      assert.match(
        refused.err,
        new RegExp(
          `^trace ${command}: Cannot (plan|run) this config \\(target "${id}"\\): target "${id}" was retired on \\S+ \\(ledger entry \\d+\\); register a new target id for new runs\\n$`,
        ),
        command,
      );
    }
    // With no data directory at all, a plan has nothing to refuse.
    const fresh = await trace([
      "external-plan",
      "--config",
      file,
      "--data-dir",
      `${dir}/none`,
    ]);
    assert.equal(fresh.code, 0, fresh.err);
  });
});

Deno.test("trace external-register refuses a retired id as retired, whatever config it is given, and suggests a new id", async () => {
  await withDb(async (db, dir) => {
    await setUp(db);
    await retireTarget(db, TARGET.id, "moved to staging-b");
    for (const base_url of [CONFIG.base_url, "http://127.0.0.1:9"]) {
      const config = join(dir, "config.json");
      await Deno.writeTextFile(config, JSON.stringify({ ...CONFIG, base_url }));
      const refused = await trace([
        "external-register",
        "--target",
        TARGET.id,
        "--config",
        config,
        ...dataOf(db),
      ]);
      assert.equal(refused.code, 2, base_url);
      assert.match(
        refused.err,
        /^trace external-register: Cannot register target "staging-a": it was retired on \S+ \(ledger entry \d+: moved to staging-b\) and retired ids are not reused; register the config under a new id, such as "staging-a-2"\n$/,
      );
    }
  });
});

/** One contract run against the demo at `url` (its config written to `dir`): exit code, stderr and report. */
async function runAgainstDemo(
  dir: string,
  url: string,
  data: string[],
): Promise<{ code: number; err: string; report: RunReport }> {
  const config = await demoConfig(dir, url);
  const run = await trace([
    "external-run",
    "--config",
    config,
    "--json",
    ...data,
  ]);
  return { code: run.code, err: run.err, report: JSON.parse(run.out) };
}

/** A staging config for the demo at `url`, written to `dir`/c.json. */
async function demoConfig(dir: string, url: string): Promise<string> {
  const config = `${dir}/c.json`;
  await Deno.writeTextFile(
    config,
    JSON.stringify({
      base_url: url,
      environment: "staging",
      allow_synthetic_writes: true,
      document_count: 2,
      deletion_window_seconds: 0.3,
      sample_interval_seconds: 0.1,
    }),
  );
  return config;
}

Deno.test("a later cleanup of a soft-delete run queries the markers, finds the canary still retrievable and stays incomplete", async () => {
  await withTempDir(async (dir) => {
    const demo = await startDemoServer({ defect: "soft-delete" });
    try {
      const data = ["--data-dir", `${dir}/data`];
      const run = await runAgainstDemo(dir, demo.url, data);
      assert.equal(run.code, 1, run.err);
      const report = run.report;
      assert.equal(report.cleanup.marker_seen.test, true);
      assert.match(report.markers?.test ?? "", /^trace_canary_/);

      const cleaned = await trace(["external-cleanup", report.run_id, ...data]);
      assert.equal(cleaned.code, 2, cleaned.err);
      assert.match(cleaned.out, /: INCOMPLETE$/m);
      assert.match(
        cleaned.out,
        /^ {2}- the test marker is still retrievable through \/query after cleanup: the application still serves the deleted text; fix it, then run trace external-cleanup again$/m,
      );
      assert.match(
        cleaned.out,
        /^ {2}markers: queried in both namespaces at every poll; at the last poll test STILL RETRIEVABLE, /m,
      );
      assert.match(
        cleaned.err,
        /cleanup poll #1 at .*test 0\/0\/0, control 0\/0\/0 \(source\/vector\/cache\); test (and control )?marker retrievable/,
      );
      assert.doesNotMatch(cleaned.out, /inventories clear|nothing synthetic/);
      // Another cleanup cannot change what the application serves: fix it
      // first, as external-show says below.
      const cleanupId = /^ {2}recorded as (\S+) in /m.exec(cleaned.out)?.[1];
      assert.ok(
        cleaned.out.endsWith(
          `\n  Cleanup ${cleanupId} found the application still serving this run's text after deleting it: fix the application's delete path (or remove the records with the application's own tools), then run trace external-cleanup ${report.run_id} --data-dir ${dir}/data again to confirm\n`,
        ),
        cleaned.out,
      );
      assert.doesNotMatch(cleaned.out, /again later/);

      const listed = JSON.parse(
        (await trace(["external-runs", "--json", ...data])).out,
      );
      assert.equal(listed.runs[0].cleanup, "incomplete");
      const view = JSON.parse(
        (await trace(["external-show", report.run_id, "--json", ...data])).out,
      );
      assert.equal(view.cleanup.markers_queried, true);
      assert.equal(view.cleanup.cleanup_complete, false);
      // The status external-cleanup --json gave, beside the flags it sums up.
      assert.equal(view.cleanup.status, "incomplete");
      assert.equal(view.cleanup.marker_seen.test, true);
      const served =
        `found the application still serving this run's text after deleting it: fix the application's delete path (or remove the records with the application's own tools), then run trace external-cleanup ${report.run_id} --data-dir ${dir}/data again to confirm`;
      assert.ok(
        view.note.includes(served.replace(` --data-dir ${dir}/data`, "")),
        view.note,
      );
      const shown = await trace(["external-show", report.run_id, ...data]);
      assert.match(
        shown.out,
        /^Later cleanup \S+ \(\S+\): INCOMPLETE: the test marker is still retrievable through \/query after cleanup/m,
      );
      // Another cleanup cannot help until the application is fixed: the
      // Cleanup section says to fix it first, then confirm, once (the
      // --json note says the same).
      assert.ok(
        shown.out.includes(
          `  A later cleanup ${view.cleanup.cleanup_id} ${served}\n`,
        ),
        shown.out,
      );
      assert.equal(shown.out.split(served).length, 2, shown.out);
      assert.doesNotMatch(shown.out, /its cleanup was incomplete/);
      assert.doesNotMatch(
        shown.out,
        /Remove the remaining synthetic records|remove what is left with/,
      );
      assert.doesNotMatch(shown.out, /nothing synthetic is left|removed/);
    } finally {
      await demo.shutdown();
    }
  });
});

Deno.test("a later cleanup of a stale-cache run, after the demo restarted without its cache, is complete with both markers queried", async () => {
  await withTempDir(async (dir) => {
    // Free now, and the restarted demo comes back on it.
    const port = closedPort();
    const data = ["--data-dir", `${dir}/data`];
    const leaky = await startDemoServer({ defect: "stale-cache", port });
    let report: RunReport;
    try {
      const run = await runAgainstDemo(dir, leaky.url, data);
      assert.equal(run.code, 1, run.err);
      report = run.report;
      assert.equal(report.cleanup.cleanup_complete, false);
    } finally {
      await leaky.shutdown();
    }
    // The same adapter address, its memory (and answer cache) gone.
    const fixed = await startDemoServer({ defect: null, port });
    try {
      const cleaned = await trace(["external-cleanup", report.run_id, ...data]);
      assert.equal(cleaned.code, 0, cleaned.err);
      assert.match(
        cleaned.out,
        /^Cleanup of run \S+ \(ids from its report\): complete \(every store of both namespaces read 0 and neither marker was retrievable\)$/m,
      );
      assert.match(
        cleaned.out,
        /^ {2}markers: queried in both namespaces at every poll; at the last poll test gone, control gone$/m,
      );
      const queries = await trace([
        "external-cleanup",
        report.run_id,
        "--json",
        ...data,
      ]);
      assert.equal(queries.code, 0, queries.err);
      const again = JSON.parse(queries.out);
      assert.equal(again.status, "not_needed");
      assert.match(
        again.reason,
        /completed: every deletion was acknowledged, every store of both namespaces read 0 and neither marker was retrievable$/,
      );

      const listed = JSON.parse(
        (await trace(["external-runs", "--json", ...data])).out,
      );
      assert.equal(listed.runs[0].cleanup, "complete");
      const view = JSON.parse(
        (await trace(["external-show", report.run_id, "--json", ...data])).out,
      );
      assert.equal(view.cleanup.markers_queried, true);
      assert.equal(view.cleanup.cleanup_complete, true);
      assert.match(
        view.note,
        /deleted every id it issued on \S+ and every store of both namespaces read 0 and neither marker was retrievable$/,
      );
      const shown = await trace(["external-show", report.run_id, ...data]);
      assert.doesNotMatch(shown.out, /retrieval was not checked/);
      assert.doesNotMatch(
        shown.out,
        new RegExp(`trace external-cleanup ${report.run_id}`),
      );
    } finally {
      await fixed.shutdown();
    }
  });
});

function runIdsOf(list: { runs: { run_id: string }[] }): string[] {
  return list.runs.map((r) => r.run_id);
}

Deno.test("trace external-runs says how many runs its limit left out, in text and in JSON, and pages on with --offset", async () => {
  await withDb(async (db, dir) => {
    await setUp(db);
    for (let i = 0; i < 3; i++) await fakeRun(db, dir);
    const limited = JSON.parse(
      (await trace(["external-runs", "--json", "--limit", "2", ...dataOf(db)]))
        .out,
    );
    assert.equal(limited.runs.length, 2);
    assert.equal(limited.total, 3);
    assert.equal(limited.truncated, true);
    const text = await trace(["external-runs", "--limit", "2", ...dataOf(db)]);
    assert.match(
      text.out,
      /^Showing the 2 newest of 3 matching runs; pass --limit 3 to list them all, or --offset 2 for the next page$/m,
    );
    // The next page holds the oldest run, and says which runs it shows.
    const next = await trace([
      "external-runs",
      "--json",
      "--limit",
      "2",
      "--offset",
      "2",
      ...dataOf(db),
    ]);
    const page = JSON.parse(next.out);
    assert.deepEqual(
      [...limited.runs, ...page.runs].map((r: { run_id: string }) => r.run_id),
      runIdsOf(
        JSON.parse(
          (await trace(["external-runs", "--json", ...dataOf(db)])).out,
        ),
      ),
    );
    assert.equal(page.truncated, false);
    assert.match(
      (await trace([
        "external-runs",
        "--limit",
        "1",
        "--offset",
        "1",
        ...dataOf(db),
      ])).out,
      /^Showing runs 2 to 2 of 3 matching runs; pass --offset 2 for older ones$/m,
    );
    assert.match(
      (await trace(["external-runs", "--offset", "5", ...dataOf(db)])).out,
      /^--offset 5 is past the last of the 3 matching runs; pass a smaller offset, or none for the newest$/m,
    );
    const refused = await trace([
      "external-runs",
      "--offset",
      "-1",
      ...dataOf(db),
    ]);
    assert.equal(refused.code, 2);
    assert.match(refused.err, /--offset/);
    const all = JSON.parse(
      (await trace(["external-runs", "--json", ...dataOf(db)])).out,
    );
    assert.equal(all.total, 3);
    assert.equal(all.truncated, false);
    assert.doesNotMatch(
      (await trace(["external-runs", ...dataOf(db)])).out,
      /Showing the/,
    );
  });
});

Deno.test("a FAIL run of trace quickstart's unregistered demo is listed as gone with the demo, not as incomplete", async () => {
  await withDb(async (db, dir) => {
    await migrate(db, ALL_MIGRATIONS);
    const config = stagingConfig({ document_count: 2 });
    const clock = new VirtualClock();
    // As trace quickstart records its runs: under the config's own target, never registered.
    const { report } = await runExternal(config, {
      db,
      dataDir: dir,
      target: configTargetRef(config),
      transport: new FakeTarget(clock, { staleCache: true }),
      clock,
      trace: false,
      lock: new RunLock(),
    });
    assert.equal(report.cleanup.cleanup_complete, false);
    const listed = JSON.parse(
      (await trace(["external-runs", "--json", ...dataOf(db)])).out,
    );
    assert.equal(listed.runs[0].cleanup, "gone_with_demo");
    assert.equal(
      (await runCatalog(db, { dataDir: dir }))[0]?.cleanup,
      "gone_with_demo",
    );
    const text = (await trace(["external-runs", ...dataOf(db)])).out;
    assert.match(text, / gone with demo /);
  });
});
