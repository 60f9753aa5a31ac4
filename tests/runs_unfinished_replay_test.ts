/**
 * A replay killed before it finished leaves only its checkpoint: the gate
 * judges it as its regression's latest replay until a later one completes,
 * and the run lists link it to the regression it was replaying.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import type { TraceDb } from "../lib/db.ts";
import { saveRegression } from "../lib/ledger/regressions.ts";
import { readCheckpoint } from "../lib/runner/checkpoint.ts";
import { digestOf } from "../lib/canonical_json.ts";
import { localPrincipal } from "../lib/mcp/mod.ts";
import { replayRegression } from "../lib/runs/replay.ts";
import { RunJobs, RunLock } from "../lib/runs/mod.ts";
import { FakeTarget, VirtualClock } from "./_fake_target.ts";
import { withDb } from "./_helpers.ts";
import { ADMIN_TOKEN, at, page } from "./browser/_server.ts";
import { withRunsFixture } from "./browser/_runs.ts";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { callOk, memoryClient } from "./mcp_support.ts";
import {
  CONFIG,
  fakeReplay,
  fakeRun,
  KILLED_REPLAY as KILLED,
  killedReplay,
  trace,
  withStagingA,
} from "./_unrecorded.ts";

/** A run whose checkpoint says it completed while the ledger lacks it. */
const LOST = "run-20261130T010000Z-00000000105e";

/** A FAIL saved as a regression, then enforced by a passing replay (started 2026-11-29). */
async function enforcedRegression(db: TraceDb, dir: string): Promise<string> {
  await withStagingA(db);
  const fail = await fakeRun(db, dir, { staleCache: true });
  const { regression } = await saveRegression(db, fail.run_id);
  const pass = await fakeReplay(db, dir, regression.regression_id);
  assert.equal(pass.verdict, "PASS");
  return regression.regression_id;
}

/** An MCP client over a ledger whose enforced regression's latest replay was killed. */
async function withKilledReplayTools(
  fn: (client: Client, regressionId: string) => Promise<void>,
): Promise<void> {
  await withDb(async (db, dir) => {
    const reg = await enforcedRegression(db, dir);
    await killedReplay(dir, reg);
    const jobs = new RunJobs({ db, dataDir: dir, lock: new RunLock() });
    const client = await memoryClient({
      db,
      dataDir: dir,
      jobs,
      principal: localPrincipal({ user_id: null }),
      allowTraceQueries: false,
    });
    try {
      await fn(client, reg);
    } finally {
      await client.close();
      await jobs.close();
    }
  });
}

Deno.test("a replay names its regression in its checkpoint; a plain run names none", async () => {
  await withDb(async (db, dir) => {
    await withStagingA(db);
    const fail = await fakeRun(db, dir, { staleCache: true });
    const { regression } = await saveRegression(db, fail.run_id);
    const replay = await fakeReplay(db, dir, regression.regression_id);
    assert.equal(
      (await readCheckpoint(dir, replay.run_id))?.regression_id,
      regression.regression_id,
    );
    assert.equal((await readCheckpoint(dir, fail.run_id))?.regression_id, null);
  });
});

Deno.test("trace external-gate does not pass when an enforced regression's latest replay was killed before it finished", async () => {
  await withDb(async (db, dir) => {
    const reg = await enforcedRegression(db, dir);
    assert.equal(
      (await trace(["external-gate", "--data-dir", dir])).code,
      0,
    );
    await killedReplay(dir, reg);

    const gate = await trace(["external-gate", "--data-dir", dir]);
    assert.equal(gate.code, 1, gate.out + gate.err);
    assert.match(
      gate.out,
      /^gate FAILED: 1 of 1 enforced regression\(s\) did not pass their latest replay$/m,
    );
    assert.match(
      gate.out,
      new RegExp(
        `^ {2}${reg} \\(staging-a\\): latest replay ${KILLED} did not finish \\(.*\\); remove what it may have left with trace external-cleanup ${KILLED} --data-dir ${dir}, then replay again with trace external-replay ${reg} --data-dir ${dir}$`,
        "m",
      ),
    );

    const json = await trace(["external-gate", "--json", "--data-dir", dir]);
    assert.equal(json.code, 1);
    const answer = JSON.parse(json.out);
    assert.equal(answer.schema, "trace.gate/1");
    assert.equal(answer.ok, false);
    assert.deepEqual(
      answer.failing.map((f: Record<string, unknown>) => ({
        ...f,
        reason: typeof f.reason,
      })),
      [{
        regression_id: reg,
        target_id: "staging-a",
        last_result: "INCONCLUSIVE",
        last_run_id: KILLED,
        last_state: "interrupted",
        // It never reached a verdict: it cannot say whether the failure came back.
        recurrence: { kind: "inconclusive" },
        reason: "string",
      }],
    );

    // --target judges the same, and another target's checkpoints do not count.
    assert.equal(
      (await trace([
        "external-gate",
        "--target",
        "staging-a",
        "--data-dir",
        dir,
      ]))
        .code,
      1,
    );
  });
});

Deno.test("external-runs and external-show link a killed replay to its regression", async () => {
  await withDb(async (db, dir) => {
    const reg = await enforcedRegression(db, dir);
    await killedReplay(dir, reg);

    const runs = JSON.parse(
      (await trace(["external-runs", "--json", "--data-dir", dir])).out,
    ).runs;
    const killed = runs.find((r: { run_id: string }) => r.run_id === KILLED);
    assert.equal(killed.state, "interrupted");
    assert.equal(killed.kept_in, "checkpoint");
    assert.equal(killed.regression_id, reg);
    const text = await trace(["external-runs", "--data-dir", dir]);
    assert.match(
      text.out,
      new RegExp(`^${KILLED} .* replay of ${reg}\\s*$`, "m"),
    );

    const show = await trace([
      "external-show",
      KILLED,
      "--json",
      "--data-dir",
      dir,
    ]);
    assert.equal(show.code, 2);
    const view = JSON.parse(show.out);
    assert.equal(view.state, "interrupted");
    assert.equal(view.regression_id, reg);
    const shown = await trace(["external-show", KILLED, "--data-dir", dir]);
    assert.match(shown.out, new RegExp(`^Replay of regression ${reg}$`, "m"));
  });
});

Deno.test("trace.external_runs and trace.external_get link a killed replay to its regression", async () => {
  await withKilledReplayTools(async (client, reg) => {
    const { runs } = await callOk(client, "trace.external_runs", {
      state: "interrupted",
    }) as { runs: { run_id: string; regression_id: string | null }[] };
    assert.deepEqual(
      runs.map((r) => [r.run_id, r.regression_id]),
      [[KILLED, reg]],
    );
    const got = await callOk(client, "trace.external_get", {
      run_id: KILLED,
    });
    assert.equal(got.state, "interrupted");
    assert.equal(got.regression_id, reg);
  });
});

Deno.test("a replay that completes after the killed one is the latest again; one started before it stays older", async () => {
  await withDb(async (db, dir) => {
    const reg = await enforcedRegression(db, dir);
    // Killed before the passing replay started: that replay is the latest.
    await killedReplay(dir, reg, { started_at: "2026-11-28T00:00:00.000Z" });
    assert.equal((await trace(["external-gate", "--data-dir", dir])).code, 0);

    await killedReplay(dir, reg);
    assert.equal((await trace(["external-gate", "--data-dir", dir])).code, 1);

    // A replay started a day after the killed one, that completes.
    const clock = new VirtualClock();
    clock.advance(2 * 86_400_000);
    const later = await replayRegression(db, reg, {
      dataDir: dir,
      transport: new FakeTarget(clock, {}),
      clock,
      trace: false,
    });
    assert.equal(later.report.verdict, "PASS");
    assert.ok(later.report.started_at > "2026-11-30T00:00:00.000Z");
    const gate = await trace(["external-gate", "--data-dir", dir]);
    assert.equal(gate.code, 0, gate.out);
    assert.match(gate.out, /every latest replay passed/);
  });
});

Deno.test("trace external-gate does not pass while the latest replay is still running", async () => {
  await withDb(async (db, dir) => {
    const reg = await enforcedRegression(db, dir);
    // This test's own process writes the checkpoint: its writer is alive.
    await killedReplay(dir, reg, { pid: Deno.pid });
    const gate = await trace(["external-gate", "--json", "--data-dir", dir]);
    assert.equal(gate.code, 1);
    const [failing] = JSON.parse(gate.out).failing;
    assert.equal(failing.last_state, "running");
    assert.equal(failing.last_run_id, KILLED);
    assert.match(
      failing.reason,
      new RegExp(
        `^latest replay ${KILLED} has not finished \\(process ${Deno.pid} is still running it\\)`,
      ),
    );
  });
});

Deno.test("a killed replay of a pending regression does not block the gate", async () => {
  await withDb(async (db, dir) => {
    await withStagingA(db);
    const fail = await fakeRun(db, dir, { staleCache: true });
    const { regression } = await saveRegression(db, fail.run_id);
    await killedReplay(dir, regression.regression_id);
    const gate = await trace(["external-gate", "--data-dir", dir]);
    assert.equal(gate.code, 0, gate.out);
    assert.match(gate.out, /no enforced regression yet/);
  });
});

Deno.test("a checkpoint written before replays were named still reads, and a damaged regression id is refused", async () => {
  await withDb(async (db, dir) => {
    await enforcedRegression(db, dir);
    const path = join(dir, "external", `${KILLED}.json`);
    const old = {
      schema: "trace.checkpoint/1",
      run_id: KILLED,
      state: "running",
      pid: 0,
      started_at: "2026-11-30T00:00:00.000Z",
      updated_at: "2026-11-30T00:00:01.000Z",
      target: {
        id: "staging-a",
        base_url: CONFIG.base_url,
        source: "registered",
      },
      config_digest: digestOf(CONFIG),
      namespaces: { test: "trace-test-old", control: "trace-control-old" },
      issued: { test: ["trace-doc-o1"], control: [] },
      verdict: null,
    };
    await Deno.writeTextFile(path, JSON.stringify(old));
    const read = await readCheckpoint(dir, KILLED);
    assert.equal(read?.regression_id, null);
    assert.equal(read?.process_identity, null);
    const show = await trace([
      "external-show",
      KILLED,
      "--json",
      "--data-dir",
      dir,
    ]);
    assert.equal(JSON.parse(show.out).regression_id, null);
    // Nothing names it a replay: the gate judges the ledger's replays.
    assert.equal((await trace(["external-gate", "--data-dir", dir])).code, 0);

    await Deno.writeTextFile(
      path,
      JSON.stringify({ ...old, regression_id: "reg-\u202etxt" }),
    );
    const damaged = await trace(["external-gate", "--data-dir", dir]);
    assert.equal(damaged.code, 2);
    assert.match(damaged.err, /cannot be read, so the gate cannot tell/);
  });
});

Deno.test("the overview and the regressions page judge a killed replay as external-gate does", async () => {
  await withRunsFixture({
    seed: async (db, dir) => {
      const reg = await enforcedRegression(db, dir);
      await killedReplay(dir, reg);
    },
  }, async (fixture) => {
    for (const path of ["/regressions.json", "/index.json"]) {
      const response = await fixture.app.request(
        at(path),
        page({ authorization: `Bearer ${ADMIN_TOKEN}` }),
      );
      assert.equal(response.status, 200, path);
      const { gate } = await response.json();
      assert.equal(gate.ok, false, path);
      assert.equal(gate.failing[0].last_run_id, KILLED, path);
      assert.equal(gate.failing[0].last_state, "interrupted", path);
    }
    const response = await fixture.app.request(
      at("/regressions"),
      page({ authorization: `Bearer ${ADMIN_TOKEN}` }),
    );
    assert.match(
      await response.text(),
      /the latest replay did not finish; clean up what it left and replay again/,
    );
  });
});

Deno.test("trace external-regressions shows the killed replay the gate judges a regression by", async () => {
  await withDb(async (db, dir) => {
    const reg = await enforcedRegression(db, dir);
    const before = JSON.parse(
      (await trace(["external-regressions", "--json", "--data-dir", dir])).out,
    );
    assert.equal(before.regressions[0].unfinished_replay, null);
    const recorded = before.regressions[0].last_run_id;
    await killedReplay(dir, reg);

    const text = await trace(["external-regressions", "--data-dir", dir]);
    assert.equal(text.code, 0, text.err);
    // The commands it prints keep the data directory they were listed from.
    const flags = ` --data-dir ${dir}`.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    assert.match(
      text.out,
      new RegExp(
        `^${reg} +staging-a +enforced +\\(did not finish\\) +1 +${KILLED}$`,
        "m",
      ),
    );
    assert.match(
      text.out,
      new RegExp(
        `^${reg}: latest replay ${KILLED} did not finish \\(started 2026-11-30T00:00:00.000Z; the latest recorded one, ${recorded}, was PASS\\); trace external-cleanup ${KILLED}${flags}, then replay again with trace external-replay ${reg}${flags}$`,
        "m",
      ),
    );

    const json = await trace([
      "external-regressions",
      "--json",
      "--data-dir",
      dir,
    ]);
    assert.equal(json.code, 0, json.err);
    const [listed] = JSON.parse(json.out).regressions;
    assert.deepEqual(listed.unfinished_replay, {
      run_id: KILLED,
      started_at: "2026-11-30T00:00:00.000Z",
      running: false,
    });
    // The ledger's own fields still describe the latest recorded replay.
    assert.equal(listed.last_run_id, recorded);
    assert.equal(listed.last_result, "PASS");

    // The same listing of the target, and another target's replays stay apart.
    const scoped = JSON.parse(
      (await trace([
        "external-regressions",
        "--target",
        "staging-a",
        "--json",
        "--data-dir",
        dir,
      ])).out,
    );
    assert.equal(scoped.regressions[0].unfinished_replay.run_id, KILLED);
  });
});

Deno.test("trace external-regressions shows no unfinished replay where the gate judges the ledger's", async () => {
  await withDb(async (db, dir) => {
    const reg = await enforcedRegression(db, dir);
    // Killed before the passing replay started: that one is the latest.
    await killedReplay(dir, reg, { started_at: "2026-11-28T00:00:00.000Z" });
    const json = JSON.parse(
      (await trace(["external-regressions", "--json", "--data-dir", dir])).out,
    );
    assert.equal(json.regressions[0].unfinished_replay, null);
    const text = await trace(["external-regressions", "--data-dir", dir]);
    assert.doesNotMatch(text.out, /did not finish/);
    assert.match(text.out, new RegExp(`^${reg} .* PASS +1 +run-`, "m"));
  });
});

Deno.test("trace external-regressions says a replay still running is the latest", async () => {
  await withDb(async (db, dir) => {
    const reg = await enforcedRegression(db, dir);
    await killedReplay(dir, reg, { pid: Deno.pid });
    const json = JSON.parse(
      (await trace(["external-regressions", "--json", "--data-dir", dir])).out,
    );
    assert.equal(json.regressions[0].unfinished_replay.running, true);
    const text = await trace(["external-regressions", "--data-dir", dir]);
    assert.match(
      text.out,
      new RegExp(
        `^${reg} +staging-a +enforced +\\(running\\) +1 +${KILLED}$`,
        "m",
      ),
    );
    assert.match(
      text.out,
      new RegExp(
        `^${reg}: latest replay ${KILLED} is running \\(started 2026-11-30T00:00:00.000Z; .*\\); list again once it has finished$`,
        "m",
      ),
    );
  });
});

Deno.test("a checkpoint whose start is no time is damaged: the gate refuses it, the listing leaves it out", async () => {
  await withDb(async (db, dir) => {
    const reg = await enforcedRegression(db, dir);
    // It would sort after every real start, and carries an escape sequence.
    await killedReplay(dir, reg, {
      started_at: "9999-12-31T23:59:59.999Z\u001b[2J",
    });
    const gate = await trace(["external-gate", "--data-dir", dir]);
    assert.equal(gate.code, 2, gate.out + gate.err);
    assert.match(
      gate.err,
      new RegExp(`Checkpoint .*${KILLED}\\.json cannot be read`),
    );
    const text = await trace(["external-regressions", "--data-dir", dir]);
    assert.equal(text.code, 0, text.err);
    assert.ok(!text.out.includes("\u001b"), text.out);
    assert.doesNotMatch(text.out, /did not finish/);
  });
});

Deno.test("a killed run whose checkpoint names a regression of another target is no replay of it", async () => {
  await withDb(async (db, dir) => {
    const reg = await enforcedRegression(db, dir);
    await killedReplay(dir, reg, {
      target: {
        id: "staging-b",
        base_url: CONFIG.base_url,
        source: "registered",
      },
    });
    const gate = await trace(["external-gate", "--data-dir", dir]);
    assert.equal(gate.code, 0, gate.out + gate.err);
    const text = await trace(["external-regressions", "--data-dir", dir]);
    assert.doesNotMatch(text.out, /did not finish/);
  });
});

Deno.test("trace.external_regressions shows the killed replay and what to do", async () => {
  await withKilledReplayTools(async (client, reg) => {
    const answer = await callOk(client, "trace.external_regressions", {}) as {
      regressions: { unfinished_replay: unknown }[];
      note: string | null;
    };
    assert.deepEqual(answer.regressions[0]!.unfinished_replay, {
      run_id: KILLED,
      started_at: "2026-11-30T00:00:00.000Z",
      running: false,
    });
    assert.equal(
      answer.note,
      `${reg}: latest replay ${KILLED} did not finish, so it did not pass; remove what it may have left with trace external-cleanup ${KILLED} (a command for the user), then replay again with trace.external_replay regression_id=${reg}`,
    );
  });
});

Deno.test("the regressions and target pages show the killed replay, even beside a completed run the ledger lacks", async () => {
  await withRunsFixture({
    seed: async (db, dir) => {
      const reg = await enforcedRegression(db, dir);
      await killedReplay(dir, reg);
      await killedReplay(dir, reg, {
        run_id: LOST,
        state: "completed",
        verdict: "PASS",
        regression_id: null,
      });
    },
  }, async (fixture) => {
    const get = (path: string) =>
      fixture.app.request(
        at(path),
        page({ authorization: `Bearer ${ADMIN_TOKEN}` }),
      );
    const json = await get("/regressions.json");
    assert.equal(json.status, 200);
    const data = await json.json();
    assert.deepEqual(data.enforced[0].unfinished_replay, {
      run_id: KILLED,
      started_at: "2026-11-30T00:00:00.000Z",
      running: false,
    });
    const target = await (await get("/targets/staging-a.json")).json();
    assert.equal(target.regressions[0].unfinished_replay.run_id, KILLED);

    for (const path of ["/regressions", "/targets/staging-a"]) {
      const html = await (await get(path)).text();
      const row = html.slice(html.indexOf(`href="/runs/${KILLED}"`));
      assert.match(row, /did not finish, started/, path);
      assert.match(
        row,
        new RegExp(`<code>trace external-cleanup ${KILLED}</code>`),
        path,
      );
      assert.match(row, /latest recorded: /, path);
    }
  });
});
