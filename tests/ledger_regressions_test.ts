import assert from "node:assert/strict";
import { migrate, type TraceDb } from "../lib/db.ts";
import { LedgerIntegrityError, RefusedError } from "../lib/errors.ts";
import { appendEntry } from "../lib/ledger/chain.ts";
import { compareRuns, REPLAY_CAVEAT } from "../lib/ledger/compare.ts";
import {
  gateRegressions,
  listRegressions,
  readDefinition,
  saveRegression,
} from "../lib/ledger/regressions.ts";
import { replayRegression } from "../lib/runs/replay.ts";
import { gate, saveRun } from "../lib/runs/regressions.ts";
import { registerTarget, targetRef } from "../lib/ledger/targets.ts";
import { ALL_MIGRATIONS } from "../lib/migrations.ts";
import { fileCheckpointSink } from "../lib/runner/checkpoint.ts";
import { runExternal } from "../lib/runs/external_run.ts";
import type { RunReport } from "../lib/runner/report.ts";
import { ASSERTION_RULES_REVISION } from "../lib/runner/rules.ts";
import {
  type FakeBehaviour,
  FakeTarget,
  VirtualClock,
} from "./_fake_target.ts";
import { stagingConfig, statementsDuring, withDb } from "./_helpers.ts";
import { withRawClient } from "./_tamper.ts";
import { replayRecurrence } from "../ledger.ts";

const CONFIG = stagingConfig({ document_count: 2 });

async function setUp(db: TraceDb): Promise<void> {
  await migrate(db, ALL_MIGRATIONS);
  await registerTarget(db, {
    targetId: "staging-a",
    config: CONFIG,
    source: "registered",
  });
}

async function runFake(
  db: TraceDb,
  dataDir: string,
  behaviour: FakeBehaviour = {},
  targetId = "staging-a",
): Promise<RunReport> {
  const clock = new VirtualClock();
  const { report } = await runExternal(CONFIG, {
    db,
    dataDir,
    target: { id: targetId, base_url: CONFIG.base_url, source: "registered" },
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
) {
  const clock = new VirtualClock();
  return await replayRegression(db, regressionId, {
    dataDir,
    transport: new FakeTarget(clock, behaviour),
    clock,
  });
}

Deno.test("saveRegression() refuses PASS and INCONCLUSIVE runs with the reason", async () => {
  await withDb(async (db, dir) => {
    await setUp(db);
    const pass = await runFake(db, dir);
    assert.equal(pass.verdict, "PASS");
    await assert.rejects(
      () => saveRegression(db, pass.run_id),
      (error: Error) =>
        error instanceof RefusedError && /verdict is PASS/.test(error.message),
    );
    const inconclusive = await runFake(db, dir, { loseControl: true });
    assert.equal(inconclusive.verdict, "INCONCLUSIVE");
    await assert.rejects(
      () => saveRegression(db, inconclusive.run_id),
      /verdict is INCONCLUSIVE; only a completed FAIL can be saved/,
    );
  });
});

Deno.test("saveRegression() says how to save a FAIL of a config never registered, and names an unregistered target", async () => {
  await withDb(async (db, dir) => {
    await setUp(db);
    const configRun = await runFake(
      db,
      dir,
      { staleCache: true },
      "cfg-0123456789ab",
    );
    assert.equal(configRun.verdict, "FAIL");
    await assert.rejects(
      () => saveRegression(db, configRun.run_id),
      /it ran from a config never registered .*register that config with trace external-register --target NAME --config FILE, run trace external-run --target NAME, and save that run$/,
    );
    const other = await runFake(db, dir, { staleCache: true }, "staging-b");
    await assert.rejects(
      () => saveRegression(db, other.run_id),
      /target "staging-b" is not registered; register it with trace external-register$/,
    );
  });
});

Deno.test("saveRegression() refuses a run that only has a checkpoint", async () => {
  await withDb(async (db, dir) => {
    await setUp(db);
    const sink = fileCheckpointSink(dir, "run-20260101T000000Z-abcdef");
    await sink.write({
      schema: "trace.checkpoint/1",
      run_id: "run-20260101T000000Z-abcdef",
      state: "running",
      pid: 999999999,
      process_identity: null,
      started_at: "2026-01-01T00:00:00.000Z",
      updated_at: "2026-01-01T00:00:00.000Z",
      target: targetRef(
        (await registerTarget(db, {
          targetId: "staging-a",
          config: CONFIG,
          source: "registered",
        })).target,
      ),
      regression_id: null,
      config_digest: "sha256:x",
      namespaces: { test: "trace-test-1", control: "trace-control-1" },
      issued: { test: ["trace-doc-1"], control: [] },
      verdict: null,
    });
    await assert.rejects(
      () => saveRun(db, "run-20260101T000000Z-abcdef", { dataDir: dir }),
      (error: Error) =>
        error instanceof RefusedError && /never completed/.test(error.message),
    );
  });
});

Deno.test("saveRegression() pins target, contract and failed assertions of a FAIL", async () => {
  await withDb(async (db, dir) => {
    await setUp(db);
    const fail = await runFake(db, dir, { staleCache: true });
    assert.equal(fail.verdict, "FAIL");
    const saved = await saveRegression(db, fail.run_id);
    assert.equal(saved.created, true);
    assert.equal(saved.regression.status, "pending");
    const def = saved.regression.definition;
    assert.equal(def.target.id, "staging-a");
    assert.equal(def.target.config_digest, fail.config_digest);
    assert.equal(def.contract.protocol_revision, "trace-staging/1");
    assert.equal(def.contract.document_count, 2);
    assert.equal(def.contract.deletion_window_seconds, 2);
    assert.deepEqual(
      def.assertions.map((a) => `${a.code}:${a.subject}`),
      ["marker_retrievable:retrieval", "residual_store:cache_records"],
    );
    const again = await saveRegression(db, fail.run_id);
    assert.equal(again.created, false);
    assert.equal((await listRegressions(db)).length, 1);
  });
});

Deno.test("replayRegression() moves pending to enforced on the first PASS, then gates FAILs", async () => {
  await withDb(async (db, dir) => {
    await setUp(db);
    const fail = await runFake(db, dir, { staleCache: true });
    const { regression } = await saveRegression(db, fail.run_id);
    const id = regression.regression_id;

    const stillBroken = await replayFake(db, dir, id, { staleCache: true });
    assert.equal(stillBroken.report.verdict, "FAIL");
    assert.equal(stillBroken.regression.status, "pending");
    assert.equal(gateRegressions(await listRegressions(db), null).ok, true);

    const fixed = await replayFake(db, dir, id);
    assert.equal(fixed.report.verdict, "PASS");
    assert.equal(fixed.regression.status, "enforced");
    assert.equal(fixed.regression.replays, 2);
    assert.equal(gateRegressions(await listRegressions(db), null).ok, true);

    const broken = await replayFake(db, dir, id, { staleCache: true });
    assert.equal(broken.regression.status, "enforced");
    assert.equal(broken.regression.last_result, "FAIL");
    const gate = gateRegressions(await listRegressions(db), "staging-a");
    assert.equal(gate.ok, false);
    assert.deepEqual(gate.failing.map((f) => f.regression_id), [id]);

    await replayFake(db, dir, id, { incomplete: true });
    const inconclusive = gateRegressions(await listRegressions(db), null);
    assert.equal(inconclusive.ok, false, "INCONCLUSIVE counts as not passed");
    assert.equal(inconclusive.failing[0]?.last_result, "INCONCLUSIVE");
  });
});

/** A FAIL saved as a regression, enforced by a passing replay, then failed again by the next: the gate fails. */
async function brokenAgain(db: TraceDb, dir: string) {
  await setUp(db);
  const fail = await runFake(db, dir, { staleCache: true });
  const { regression } = await saveRegression(db, fail.run_id);
  const id = regression.regression_id;
  await replayFake(db, dir, id);
  const { report } = await replayFake(db, dir, id, { staleCache: true });
  return { id, report };
}

Deno.test("gateRegressions() takes recurrences already judged as they are instead of judging them again", async () => {
  await withDb(async (db, dir) => {
    const { id, report } = await brokenAgain(db, dir);
    const regressions = await listRegressions(db);

    const fromReports = await gate(db);
    const recurrence = fromReports.failing[0]?.recurrence;
    assert.equal(recurrence?.kind, "recurred");
    // A library caller judges it with the function the ledger entry point exports.
    assert.deepEqual(
      replayRecurrence(regressions[0]!.definition, report),
      recurrence,
    );
    assert.deepEqual(
      gateRegressions(regressions, null, fromReports.ledger_head, {
        latestRecurrences: { [id]: recurrence },
      }),
      fromReports,
    );
    const unjudged = gateRegressions(regressions, null, null, {
      latestRecurrences: {},
    });
    assert.equal(unjudged.failing[0]?.recurrence, null);
    assert.equal(
      unjudged.failing[0]?.reason,
      `latest replay ${report.run_id} was FAIL`,
    );
  });
});

Deno.test("replayRegression() refuses protocol or contract drift before any request", async () => {
  await withDb(async (db, dir) => {
    await setUp(db);
    const fail = await runFake(db, dir, { staleCache: true });
    const { regression } = await saveRegression(db, fail.run_id);
    const drifted = structuredClone(regression.definition);
    drifted.regression_id = "reg-drifted";
    drifted.contract.protocol_revision = "trace-staging/0";
    drifted.contract.deletion_window_seconds = 9;
    drifted.contract.assertion_rules = "trace-assertions/5";
    await appendEntry(db, {
      kind: "regression",
      entityId: "reg-drifted",
      targetId: "staging-a",
      payload: drifted,
    });
    const clock = new VirtualClock();
    const target = new FakeTarget(clock);
    await assert.rejects(
      () =>
        replayRegression(db, "reg-drifted", {
          dataDir: dir,
          transport: target,
          clock,
        }),
      (error: Error) =>
        error instanceof RefusedError &&
        error.message.includes(
          `contract drifted (assertion_rules, deletion_window_seconds, protocol_revision); it was saved under the rules trace-assertions/5, and this build judges runs by ${ASSERTION_RULES_REVISION} (docs/report.md says what changed); save a new regression`,
        ),
    );
    assert.equal(target.calls.length, 0);
  });
});

Deno.test("replayRegression() refuses a target whose stored config was edited, before any request", async () => {
  await withDb(async (db, dir) => {
    await setUp(db);
    const fail = await runFake(db, dir, { staleCache: true });
    const { regression } = await saveRegression(db, fail.run_id);
    await withRawClient(db, async (raw) => {
      await raw.execute("DROP TRIGGER ledger_targets_no_update");
      await raw.execute({
        sql:
          "UPDATE ledger_targets SET config_json = ?, config_digest = 'sha256:other' WHERE target_id = 'staging-a'",
        args: [JSON.stringify({ ...CONFIG, document_count: 7 })],
      });
    });
    const clock = new VirtualClock();
    const target = new FakeTarget(clock);
    await assert.rejects(
      () =>
        replayRegression(db, regression.regression_id, {
          dataDir: dir,
          transport: target,
          clock,
        }),
      (error: Error) =>
        error instanceof LedgerIntegrityError &&
        /^The ledger is broken at entry 1: run trace ledger verify/
          .test(error.message),
    );
    assert.equal(target.calls.length, 0);
    // Nothing was removed; every reader now refuses the broken ledger.
    const kept = await db.client.execute({
      sql:
        "SELECT COUNT(*) AS n FROM ledger_entries WHERE kind = 'regression' AND entity_id = ?",
      args: [regression.regression_id],
    });
    assert.equal(Number(kept.rows[0]!.n), 1);
    await assert.rejects(
      () => readDefinition(db, regression.regression_id),
      LedgerIntegrityError,
    );
  });
});

Deno.test("compareRuns() shows fixed findings, both cleanups and the caveat", async () => {
  await withDb(async (db, dir) => {
    await setUp(db);
    const before = await runFake(db, dir, { staleCache: true });
    const after = await runFake(db, dir);
    const c = compareRuns(before, after);
    assert.equal(c.a.verdict, "FAIL");
    assert.equal(c.b.verdict, "PASS");
    assert.deepEqual(
      c.findings.fixed.map((f) => `${f.code}:${f.subject}`).sort(),
      ["marker_retrievable:retrieval", "residual_store:cache_records"],
    );
    assert.deepEqual(c.findings.still_present, []);
    assert.deepEqual(c.findings.new, []);
    assert.equal(c.cleanup.a.cleanup_complete, false);
    assert.equal(c.cleanup.b.cleanup_complete, true);
    assert.equal(c.caveat, REPLAY_CAVEAT);
    assert.match(c.caveat, /does not prove/);
  });
});

Deno.test("compareRuns() refuses different targets and different contracts", async () => {
  await withDb(async (db, dir) => {
    await setUp(db);
    await registerTarget(db, {
      targetId: "staging-b",
      config: CONFIG,
      source: "registered",
    });
    const a = await runFake(db, dir);
    const b = await runFake(db, dir, {}, "staging-b");
    assert.throws(
      () => compareRuns(a, a),
      /Cannot compare (\S+) with \1: it is the same run; compare it with another run of its target/,
    );
    assert.throws(
      () => compareRuns(a, b),
      (error: Error) =>
        error instanceof RefusedError &&
        /different targets/.test(error.message),
    );
    const other = structuredClone(a);
    other.run_id = "run-other";
    other.timing.document_count = 9;
    assert.throws(
      () => compareRuns(a, other),
      /different contracts \(document_count\)/,
    );
  });
});

/** Edits the file through another connection, as a tool beside a running server would. */
async function tamperBeside(db: TraceDb, sql: string): Promise<void> {
  await withRawClient(db, async (raw) => {
    await raw.execute("DROP TRIGGER IF EXISTS ledger_entries_no_update");
    await raw.execute(sql);
  });
}

Deno.test("gate() reads no replay of a regression it does not enforce", async () => {
  await withDb(async (db, dir) => {
    await setUp(db);
    const fail = await runFake(db, dir, { staleCache: true });
    const { regression } = await saveRegression(db, fail.run_id);
    await replayFake(db, dir, regression.regression_id, { staleCache: true });
    const reads = await statementsDuring(
      db,
      /FROM ledger_entries WHERE kind = \? AND entity_id = \?/,
      async () => {
        assert.equal((await gate(db, undefined, { dataDir: dir })).ok, true);
      },
    );
    assert.deepEqual(reads, [], "the pending regression's replay is not read");
  });
});

Deno.test("gate() on a long-lived handle refuses a replay hidden by an edit made beside it", async () => {
  await withDb(async (db, dir) => {
    await brokenAgain(db, dir);
    assert.equal((await gate(db)).ok, false, "the last replay failed");
    // Same handle, as `trace serve` holds it: the last replay's kind is
    // changed so no reader sees it, and its chain digest is left as it was.
    await tamperBeside(
      db,
      "UPDATE ledger_entries SET kind = 'cleanup' WHERE seq = (SELECT MAX(seq) FROM ledger_entries WHERE kind = 'replay')",
    );
    await assert.rejects(() => gate(db), LedgerIntegrityError);
  });
});

Deno.test("the ledger refuses INSERT OR REPLACE over an existing entry", async () => {
  await withDb(async (db, dir) => {
    await setUp(db);
    await runFake(db, dir);
    await withRawClient(db, async (raw) => {
      await assert.rejects(
        () =>
          raw.execute(
            "INSERT OR REPLACE INTO ledger_entries SELECT * FROM ledger_entries WHERE seq = 1",
          ),
        /append-only/,
      );
    });
  });
});
