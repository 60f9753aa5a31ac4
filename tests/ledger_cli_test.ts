/** The ledger commands through `main()`: exit codes and one-line errors. */

import assert from "node:assert/strict";
import { join } from "node:path";
import { main } from "../cli.ts";
import { renderReport } from "../cli/_report_text.ts";
import { dataFlagsOf, nextSteps } from "../cli/_run_outputs.ts";
import { migrate, type TraceDb } from "../lib/db.ts";
import { saveRegression } from "../lib/ledger/regressions.ts";
import { replayRegression } from "../lib/runs/replay.ts";
import { registerTarget } from "../lib/ledger/targets.ts";
import { ALL_MIGRATIONS } from "../lib/migrations.ts";
import { runExternal } from "../lib/runs/external_run.ts";
import type { RunReport } from "../lib/runner/report.ts";
import {
  type FakeBehaviour,
  FakeTarget,
  VirtualClock,
} from "./_fake_target.ts";
import { captureIo, stagingConfig, withDb } from "./_helpers.ts";

const CONFIG = stagingConfig({ document_count: 2 });
const TARGET = { id: "staging-a", base_url: CONFIG.base_url } as const;

async function runFake(
  db: TraceDb,
  dataDir: string,
  behaviour: FakeBehaviour = {},
): Promise<RunReport> {
  const clock = new VirtualClock();
  const { report } = await runExternal(CONFIG, {
    db,
    dataDir,
    target: { ...TARGET, source: "registered" },
    transport: new FakeTarget(clock, behaviour),
    clock,
  });
  return report;
}

async function replayFake(
  db: TraceDb,
  dataDir: string,
  regressionId: string,
  behaviour: FakeBehaviour = {},
): Promise<void> {
  const clock = new VirtualClock();
  await replayRegression(db, regressionId, {
    dataDir,
    transport: new FakeTarget(clock, behaviour),
    clock,
  });
}

/** A ledger with one target, one FAIL run and, optionally, an enforced regression that fails again. */
async function seed(
  db: TraceDb,
  dataDir: string,
  options: { brokenAgain: boolean },
): Promise<{ runId: string; regressionId: string }> {
  await migrate(db, ALL_MIGRATIONS);
  await registerTarget(db, {
    targetId: TARGET.id,
    config: CONFIG,
    source: "registered",
  });
  const fail = await runFake(db, dataDir, { staleCache: true });
  const { regression } = await saveRegression(db, fail.run_id);
  if (options.brokenAgain) {
    await replayFake(db, dataDir, regression.regression_id);
    await replayFake(db, dataDir, regression.regression_id, {
      staleCache: true,
    });
  }
  return { runId: fail.run_id, regressionId: regression.regression_id };
}

async function trace(args: string[]) {
  const io = captureIo();
  const code = await main(args, io);
  return { code, out: io.stdout(), err: io.stderr() };
}

function assertOneLine(text: string): void {
  assert.equal(text.trimEnd().split("\n").length, 1, text);
}

Deno.test("trace external-gate exits 1 naming an enforced regression whose latest replay failed", async () => {
  await withDb(async (db, dir) => {
    const { regressionId } = await seed(db, dir, { brokenAgain: true });
    const gate = await trace(["external-gate", "--data-dir", dir]);
    assert.equal(gate.code, 1, gate.err);
    assert.match(gate.out, /^gate FAILED: 1 of 1 enforced regression/);
    assert.match(gate.out, new RegExp(`${regressionId} \\(staging-a\\)`));
    const scoped = await trace([
      "external-gate",
      "--target",
      "staging-a",
      "--data-dir",
      dir,
    ]);
    assert.equal(scoped.code, 1);
  });
});

Deno.test("trace external-gate and external-regressions refuse an unknown --target with exit 2", async () => {
  await withDb(async (db, dir) => {
    await seed(db, dir, { brokenAgain: false });
    for (const command of ["external-gate", "external-regressions"]) {
      const result = await trace([
        command,
        "--target",
        "no-such-target",
        "--data-dir",
        dir,
      ]);
      assert.equal(result.code, 2, command);
      assert.equal(
        result.err,
        `trace ${command}: Cannot find target "no-such-target"; see trace external-targets\n`,
      );
      assert.equal(result.out, "");
    }
  });
});

Deno.test("trace external-show, external-save and external-compare give one-line errors for bad run ids", async () => {
  await withDb(async (db, dir) => {
    const { runId } = await seed(db, dir, { brokenAgain: false });
    const unknown = "run-20260101T000000Z-000000";
    const corrupt = "run-20260101T000000Z-c0ffee";
    await Deno.writeTextFile(
      join(dir, "external", `${corrupt}.json`),
      "{not json",
    );
    const cases: [string[], RegExp][] = [
      [["external-show", unknown], /Cannot find run .* or among checkpoints/],
      [
        ["external-save", unknown],
        /Cannot find run .*; list runs with trace external-runs/,
      ],
      [
        ["external-compare", runId, unknown],
        /Cannot compare: no completed external run run-20260101T000000Z-000000/,
      ],
      [["external-show", "../../etc/passwd"], /Invalid run id/],
      [["external-save", "bad\nid"], /Invalid run id "bad\\nid"/],
      [["external-compare", runId, "a b"], /Invalid run id "a b"/],
      [["external-show", corrupt], /Checkpoint .* is not valid JSON/],
      [["external-save", corrupt], /Checkpoint .* is not valid JSON/],
    ];
    for (const [args, message] of cases) {
      const result = await trace([...args, "--data-dir", dir]);
      assert.equal(result.code, 2, args.join(" "));
      assert.match(result.err, new RegExp(`^trace ${args[0]}: `));
      assert.match(result.err, message);
      assertOneLine(result.err);
    }
  });
});

Deno.test("usage errors carry the command prefix once", async () => {
  const cases: [string[], string][] = [
    [
      ["external-run", "--bogus"],
      "trace external-run: Unknown option '--bogus'; see trace external-run --help\n",
    ],
    [
      ["external-save"],
      "trace external-save: Missing RUN_ID; see trace external-save --help\n",
    ],
    [
      ["external-show", "a", "b"],
      'trace external-show: Unexpected argument "b"; see trace external-show --help\n',
    ],
    [
      ["external-register", "--config", "x.json"],
      "trace external-register: --target ID is required; see trace external-register --help\n",
    ],
    [
      ["external-compare", "run-a"],
      "trace external-compare: Missing RUN_B; see trace external-compare --help\n",
    ],
    [
      ["external-runs", "--limit", "--json"],
      "trace external-runs: --limit needs a value; see trace external-runs --help\n",
    ],
    [
      ["external-runs", "--limit"],
      "trace external-runs: --limit needs a value; see trace external-runs --help\n",
    ],
    [
      ["external-runs", "--limit", "9007199254740993"],
      "trace external-runs: --limit 9007199254740993 is too large; give at most 15 digits\n",
    ],
    [
      ["obs", "health", "--samples", "99999999999"],
      'trace obs health: --samples must be a whole number from 1 to 50, got "99999999999"\n',
    ],
    // An unset shell variable must not fall back to the real data directory.
    [
      ["events", "export", "--data-dir", ""],
      "trace events export: --data-dir was given an empty value; give one, or leave the flag out; see trace events export --help\n",
    ],
  ];
  for (const [args, expected] of cases) {
    const result = await trace(args);
    assert.equal(result.code, 2, args.join(" "));
    assert.equal(result.err, expected);
  }
  const group = await trace(["ledger"]);
  assert.equal(group.code, 2);
  assert.match(group.err, /^trace ledger: .*\n\nUsage: trace ledger <command>/);
  const demo = await trace(["demo", "--defect", "flaky-disk"]);
  assert.match(demo.err, /^trace demo: Unknown --defect "flaky-disk"; valid/);
  assert.doesNotMatch(demo.err, /demo: demo:/);
});

Deno.test("trace quickstart refuses a defect name that is only an object property", async () => {
  for (const name of ["constructor", "toString", "__proto__"]) {
    const result = await trace(["quickstart", "--defect", name]);
    assert.equal(result.code, 2, name);
    assert.match(
      result.err,
      /^trace quickstart: Unknown --defect ".*"; valid defects: none, stale-cache, /,
    );
    assertOneLine(result.err);
  }
});

Deno.test("nextSteps() never prints a token from --db", () => {
  const db =
    "libsql://admin:s3cret@db.example.test/trace?authToken=TOPSECRET#x";
  const flags = dataFlagsOf({ "data-dir": "/d", db });
  assert.equal(flags, " --data-dir /d --db libsql://db.example.test/trace");
  const report = {
    run_id: "run-1",
    verdict: "FAIL",
    target: { id: "t" },
  } as RunReport;
  const steps = nextSteps(report, null, { db });
  for (const command of [steps.save!, steps.replay!]) {
    assert.doesNotMatch(command, /s3cret|TOPSECRET|admin|authToken/);
  }
  assert.match(steps.save!, /^trace external-save run-1 --db libsql:\/\/db\./);
  assert.match(
    steps.replay!,
    /^trace external-replay reg-1 --db libsql:\/\/db\./,
  );
});

Deno.test("renderReport() spells out INCONCLUSIVE findings in an aligned column", async () => {
  await withDb(async (db, dir) => {
    await migrate(db, ALL_MIGRATIONS);
    const report = await runFake(db, dir, { loseControl: true });
    assert.equal(report.verdict, "INCONCLUSIVE");
    const text = renderReport(report);
    assert.match(text, /^ {2}INCONCLUSIVE {2}The control record/m);
    assert.doesNotMatch(text, /INCON /);
  });
});
