import assert from "node:assert/strict";
import { join } from "node:path";
import { type DemoServer, startDemoServer } from "../cli/demo.ts";
import { externalPlan, externalRun } from "../cli/external.ts";
import { ledgerVerify } from "../cli/ledger.ts";
import {
  externalGate,
  externalRegressions,
  externalReplay,
  externalSave,
} from "../cli/regressions.ts";
import { externalCompare, externalShow } from "../cli/runs.ts";
import { externalRegister, externalTargets } from "../cli/targets.ts";
import type { DemoDefect } from "../lib/demo/defects.ts";
import { openDb } from "../lib/db.ts";
import { listEntries } from "../lib/ledger/chain.ts";
import { verifyLedger } from "../lib/ledger/verify.ts";
import { captureIo, withTempDir } from "./_helpers.ts";

const CLI = new URL("../cli.ts", import.meta.url).pathname;

function demoConfig(url: string, windowSeconds = 0.6): string {
  return JSON.stringify({
    base_url: url,
    environment: "staging",
    allow_synthetic_writes: true,
    document_count: 2,
    deletion_window_seconds: windowSeconds,
    sample_interval_seconds: Math.min(0.3, windowSeconds),
  });
}

async function withDemo<T>(
  defect: DemoDefect | null,
  fn: (demo: DemoServer) => Promise<T>,
  port = 0,
): Promise<T> {
  const demo = await startDemoServer({ defect, port });
  try {
    return await fn(demo);
  } finally {
    await demo.shutdown();
  }
}

async function call(
  command: (
    args: string[],
    io: ReturnType<typeof captureIo>,
  ) => Promise<number>,
  args: string[],
): Promise<{ code: number; out: string; err: string }> {
  const io = captureIo();
  const code = await command(args, io);
  return { code, out: io.stdout(), err: io.stderr() };
}

Deno.test("register, run (FAIL), save, replay on a fixed app (PASS), compare, gate", async () => {
  await withTempDir(async (dir) => {
    const data = ["--data-dir", join(dir, "data")];
    const configPath = join(dir, "staging.json");
    const { runId, port } = await withDemo("stale-cache", async (demo) => {
      await Deno.writeTextFile(configPath, demoConfig(demo.url));
      const reg = await call(externalRegister, [
        "--target",
        "demo",
        "--config",
        configPath,
        ...data,
      ]);
      assert.equal(reg.code, 0, reg.err);
      const plan = await call(externalPlan, [
        "--target",
        "demo",
        "--json",
        ...data,
      ]);
      assert.equal(JSON.parse(plan.out).target.id, "demo");
      const run = await call(externalRun, [
        "--target",
        "demo",
        "--json",
        ...data,
        "--output",
        join(dir, "before.json"),
        "--junit",
        join(dir, "before.xml"),
        "--summary-md",
        join(dir, "before.md"),
      ]);
      assert.equal(run.code, 1, run.err);
      const report = JSON.parse(run.out);
      assert.equal(report.verdict, "FAIL");
      assert.equal(report.target.id, "demo");
      assert.deepEqual(
        JSON.parse(await Deno.readTextFile(join(dir, "before.json"))),
        report,
      );
      const junit = await Deno.readTextFile(join(dir, "before.xml"));
      assert.match(
        junit,
        /<testcase name="deletion.cache_records"[^>]*>\s*<failure /,
      );
      const md = await Deno.readTextFile(join(dir, "before.md"));
      const regId = report.run_id.replace(/^run-/, "reg-");
      // Save first; replay only after the application was fixed.
      const save = md.indexOf(
        `trace external-save ${report.run_id} --data-dir ${join(dir, "data")}`,
      );
      const fix = md.indexOf("After you fix the application, replay it");
      const replay = md.indexOf(
        `trace external-replay ${regId} --data-dir ${join(dir, "data")}`,
      );
      assert.ok(save > 0 && save < fix && fix < replay, md);
      assert.doesNotMatch(md, /&&/);
      assert.match(
        run.err,
        /^next: trace external-save .*\nthen, after you fix the application: trace external-replay /m,
      );
      return { runId: report.run_id as string, port: demo.port };
    });

    const saved = await call(externalSave, [runId, "--json", ...data]);
    assert.equal(saved.code, 0);
    const regression = JSON.parse(saved.out).regression;
    assert.equal(regression.status, "pending");

    const replayId = await withDemo(null, async () => {
      const replay = await call(externalReplay, [
        regression.regression_id,
        "--json",
        ...data,
      ]);
      assert.equal(replay.code, 0, replay.err);
      const result = JSON.parse(replay.out);
      assert.equal(result.report.verdict, "PASS");
      assert.equal(result.regression.status, "enforced");
      return result.report.run_id as string;
    }, port);

    const compare = await call(externalCompare, [runId, replayId, ...data]);
    assert.equal(compare.code, 0);
    assert.match(
      compare.out,
      /fixed \(in A, not in B\)\n {4}marker_retrievable on retrieval: .*\n {4}residual_store on cache_records/,
    );
    assert.match(compare.out, /A {2}INCOMPLETE/);
    assert.match(compare.out, /B {2}complete/);
    assert.match(
      compare.out,
      /a PASS does not prove that records left behind by the earlier run were cleaned up/,
    );

    const show = await call(externalShow, [replayId, ...data]);
    assert.equal(show.code, 0);
    assert.match(
      show.out,
      new RegExp(`Replay of regression ${regression.regression_id}`),
    );
    const list = await call(externalRegressions, ["--json", ...data]);
    assert.equal(JSON.parse(list.out).regressions[0].last_result, "PASS");
    const gate = await call(externalGate, ["--target", "demo", ...data]);
    assert.equal(gate.code, 0, gate.out);
    assert.equal((await call(ledgerVerify, [...data])).code, 0);

    // The bug comes back: the summary on stdout, as CI posts it, says so,
    // and so does stderr, since stdout holds the summary.
    const back = await withDemo("stale-cache", () =>
      call(externalReplay, [
        regression.regression_id,
        "--summary-md",
        "-",
        ...data,
      ]), port);
    assert.equal(back.code, 1, back.err);
    const recurred =
      `${regression.regression_id}\`?: enforced, and this replay did not pass \\(FAIL\\): `;
    assert.match(back.out, new RegExp(`Replay of regression \`${recurred}`));
    assert.match(back.err, new RegExp(`^Regression ${recurred}`, "m"));
  });
});

Deno.test("externalRun() with --config registers a config-derived target once", async () => {
  await withTempDir(async (dir) => {
    const data = ["--data-dir", join(dir, "data")];
    await withDemo(null, async (demo) => {
      const path = join(dir, "c.json");
      await Deno.writeTextFile(path, demoConfig(demo.url, 0.3));
      const first = await call(externalRun, [
        "--config",
        path,
        "--json",
        ...data,
      ]);
      const second = await call(externalRun, [
        "--config",
        path,
        "--json",
        ...data,
      ]);
      assert.equal(first.code, 0, first.err);
      assert.match(first.err, /target: registered cfg-[0-9a-f]{12}/);
      assert.doesNotMatch(second.err, /target: registered/);
      const targets =
        JSON.parse((await call(externalTargets, ["--json", ...data])).out)
          .targets;
      assert.equal(targets.length, 1);
      assert.equal(targets[0].source, "config");
      assert.equal(JSON.parse(first.out).target.id, targets[0].target_id);
    });
  });
});

Deno.test("externalRun() never shares an output path, not even between concurrent runs", async () => {
  await withTempDir(async (dir) => {
    const data = ["--data-dir", join(dir, "data")];
    await withDemo(null, async (demo) => {
      const path = join(dir, "c.json");
      await Deno.writeTextFile(path, demoConfig(demo.url, 0.3));
      const existing = join(dir, "exists.json");
      await Deno.writeTextFile(existing, "keep");
      await assert.rejects(
        () =>
          call(externalRun, ["--config", path, "--output", existing, ...data]),
        /--output .*exists\.json: the file already exists/,
      );
      assert.equal(await Deno.readTextFile(existing), "keep");
      await assert.rejects(
        () =>
          call(externalRun, [
            "--config",
            path,
            "--output",
            join(dir, "a"),
            "--junit",
            join(dir, "a"),
            ...data,
          ]),
        /names the same file/,
      );
      const shared = join(dir, "shared.json");
      const outcomes = await Promise.allSettled([
        call(externalRun, ["--config", path, "--output", shared, ...data]),
        call(externalRun, ["--config", path, "--output", shared, ...data]),
      ]);
      assert.deepEqual(outcomes.map((o) => o.status).sort(), [
        "fulfilled",
        "rejected",
      ]);
      const refused = outcomes.find((o) =>
        o.status === "rejected"
      ) as PromiseRejectedResult;
      // Refused either while the other run holds the path or, when the
      // machine is slow enough for the first run to finish first, because
      // its file now exists: never written twice.
      assert.match(
        refused.reason.message,
        /another run reserved it|the file already exists/,
      );
      assert.equal(JSON.parse(await Deno.readTextFile(shared)).verdict, "PASS");
    });
  });
});

function child(args: string[]): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, ...args],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

Deno.test("two processes run against one data directory at once", async () => {
  await withTempDir(async (dir) => {
    const dataDir = join(dir, "data");
    await withDemo(null, async (demo) => {
      const path = join(dir, "c.json");
      await Deno.writeTextFile(path, demoConfig(demo.url, 1));
      const runs = [0, 1].map(() =>
        child([
          "external-run",
          "--config",
          path,
          "--json",
          "--data-dir",
          dataDir,
        ])
      );
      const outputs = await Promise.all(runs.map((c) => c.output()));
      const reports = outputs.map((o) => {
        assert.equal(o.code, 0, new TextDecoder().decode(o.stderr));
        return JSON.parse(new TextDecoder().decode(o.stdout));
      });
      assert.notEqual(reports[0].run_id, reports[1].run_id);
      assert.notEqual(reports[0].namespaces.test, reports[1].namespaces.test);
      const db = await openDb({ dataDir });
      try {
        assert.equal((await listEntries(db, "run")).length, 2);
        assert.equal((await listEntries(db, "target")).length, 1);
        assert.equal((await verifyLedger(db)).ok, true);
      } finally {
        db.close();
      }
    });
  });
});

async function waitForCheckpoint(dataDir: string): Promise<{ run_id: string }> {
  const dir = join(dataDir, "external");
  for (let i = 0; i < 600; i++) {
    try {
      for await (const entry of Deno.readDir(dir)) {
        if (!entry.name.endsWith(".json")) continue;
        const checkpoint = JSON.parse(
          await Deno.readTextFile(join(dir, entry.name)),
        );
        if (checkpoint.issued.control.length === 1) return checkpoint;
      }
    } catch (error) {
      if (
        !(error instanceof Deno.errors.NotFound || error instanceof SyntaxError)
      ) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error("no checkpoint appeared within 30 s");
}

Deno.test("externalShow() reports a killed run as interrupted, never PASS", async () => {
  await withTempDir(async (dir) => {
    const dataDir = join(dir, "data");
    const data = ["--data-dir", dataDir];
    await withDemo(null, async (demo) => {
      const path = join(dir, "slow.json");
      await Deno.writeTextFile(path, demoConfig(demo.url, 60));
      const running = child(["external-run", "--config", path, ...data]);
      let killed = false;
      try {
        const { run_id } = await waitForCheckpoint(dataDir);
        // Give the child time to ingest, delete and enter its 60 s window.
        await new Promise((resolve) => setTimeout(resolve, 1000));
        const live = await call(externalShow, [run_id, "--json", ...data]);
        assert.equal(JSON.parse(live.out).state, "running");
        assert.equal(JSON.parse(live.out).verdict, "RUNNING");
        const liveText = await call(externalShow, [run_id, ...data]);
        assert.match(liveText.out, /^RUNNING {2}run-\S+ {2}\(running\)/);
        assert.equal(liveText.code, 2);
        running.kill("SIGKILL");
        killed = true;
        await running.status;
        const shown = await call(externalShow, [run_id, "--json", ...data]);
        assert.equal(shown.code, 2);
        const view = JSON.parse(shown.out);
        assert.equal(view.state, "interrupted");
        assert.equal(view.verdict, "INCONCLUSIVE");
        assert.equal(view.report, null);
        assert.equal(view.checkpoint.issued.test.length, 2);
        const text = await call(externalShow, [run_id, ...data]);
        assert.match(text.out, /^INCONCLUSIVE {2}run-\S+ {2}\(interrupted\)/);
        assert.match(text.out, /issued test ids: trace-doc-/);
        await assert.rejects(
          () => call(externalSave, [run_id, ...data]),
          /never completed/,
        );
      } finally {
        if (!killed) {
          running.kill("SIGKILL");
          await running.status;
        }
        await running.stdout.cancel();
        await running.stderr.cancel();
      }
    });
  });
});
