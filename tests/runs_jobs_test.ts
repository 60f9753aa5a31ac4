/** The job manager: background runs the UI and MCP start, poll, cancel and find again after a restart. */

import assert from "node:assert/strict";
import { main } from "../cli.ts";
import type { StagingTransport } from "../lib/contract/protocol.ts";
import { migrate, type TraceDb } from "../lib/db.ts";
import {
  ConfigError,
  NotFoundError,
  TokenEnvUnsetError,
} from "../lib/errors.ts";
import { registerTarget } from "../lib/ledger/targets.ts";
import { ALL_MIGRATIONS } from "../lib/migrations.ts";
import { readCheckpoint } from "../lib/runner/checkpoint.ts";
import {
  RunBusyError,
  runExternal,
  RunJobs,
  type RunJobsOptions,
  type RunJobView,
  RunLock,
  saveRun,
  viewRun,
} from "../lib/runs/mod.ts";
import {
  type FakeBehaviour,
  FakeTarget,
  VirtualClock,
} from "./_fake_target.ts";
import { captureIo, stagingConfig, withDb } from "./_helpers.ts";

const CONFIG = stagingConfig({ document_count: 2 });
const TARGET_ID = "staging-a";

async function setUp(db: TraceDb): Promise<void> {
  await migrate(db, ALL_MIGRATIONS);
  await registerTarget(db, {
    targetId: TARGET_ID,
    config: CONFIG,
    source: "registered",
  });
}

/**
 * A fake target that holds the `holdAt`-th test inventory after the
 * deletion until released, so a test can look at a job while it runs.
 */
function heldTarget(clock: VirtualClock, holdAt: number) {
  const fake = new FakeTarget(clock);
  const reached = Promise.withResolvers<void>();
  const release = Promise.withResolvers<void>();
  let deleted = false;
  let inventories = 0;
  const transport: StagingTransport = {
    async post(op, body) {
      if (op === "delete") deleted = true;
      const test = String(body.namespace).startsWith("trace-test-");
      if (deleted && test && op === "inventory" && ++inventories === holdAt) {
        reached.resolve();
        await release.promise;
      }
      return await fake.post(op, body);
    },
  };
  return {
    transport,
    reached: reached.promise,
    release: () => release.resolve(),
  };
}

/** A manager on a virtual clock; its own lock unless `processLock` asks for the process's. */
function manager(
  db: TraceDb,
  dataDir: string,
  transport: (clock: VirtualClock) => StagingTransport,
  options: { processLock?: boolean } = {},
): RunJobs {
  const clock = new VirtualClock();
  const jobs: RunJobsOptions = {
    db,
    dataDir,
    clock,
    trace: false,
    transport: () => transport(clock),
  };
  if (!options.processLock) jobs.lock = new RunLock();
  return new RunJobs(jobs);
}

/** Polls `get` until the job leaves `running`, yielding to the run between polls. */
async function pollUntilDone(
  jobs: RunJobs,
  runId: string,
): Promise<RunJobView> {
  for (let polls = 0; polls < 10_000; polls++) {
    const view = await jobs.get(runId);
    if (view.state !== "running") return view;
    await new Promise((resolve) => setTimeout(resolve, 0));
  }
  throw new Error(`run ${runId} never left the running state`);
}

Deno.test("RunJobs.start() returns once the checkpoint exists, and get() polls the run to completion", async () => {
  await withDb(async (db, dataDir) => {
    await setUp(db);
    const jobs = manager(db, dataDir, (clock) => new FakeTarget(clock));
    const started = await jobs.start({ targetId: TARGET_ID });
    assert.equal(started.target_id, TARGET_ID);
    assert.equal(started.regression_id, null);
    assert.equal(
      started.checkpoint,
      `${dataDir}/external/${started.run_id}.json`,
    );
    const checkpoint = await readCheckpoint(dataDir, started.run_id);
    assert.equal(checkpoint?.run_id, started.run_id);

    const done = await pollUntilDone(jobs, started.run_id);
    assert.equal(done.state, "completed");
    assert.equal(done.verdict, "PASS");
    assert.equal(done.report?.run_id, started.run_id);
    assert.equal(done.recording?.kept_in, "ledger");
    assert.deepEqual(done.trace, { status: "off" });
    assert.equal(done.progress, null);
    assert.equal(jobs.active, null);

    const elsewhere = await new RunJobs({ db, dataDir }).get(started.run_id);
    assert.equal(elsewhere.state, "completed");
    assert.equal(elsewhere.verdict, "PASS");
  });
});

Deno.test("RunJobs.get() reports the phase and last sample of a running job", async () => {
  await withDb(async (db, dataDir) => {
    await setUp(db);
    const held = heldTarget(new VirtualClock(), 2);
    const jobs = manager(db, dataDir, () => held.transport);
    const { run_id } = await jobs.start({ targetId: TARGET_ID });
    await held.reached;
    assert.equal((await readCheckpoint(dataDir, run_id))?.state, "running");
    const running = await jobs.get(run_id);
    assert.equal(running.state, "running");
    assert.equal(running.verdict, null);
    assert.equal(running.report, null);
    assert.equal(running.progress?.phase, "window");
    assert.equal(running.progress?.sample?.index, 0);
    assert.ok((running.progress?.requests ?? 0) > 0);
    held.release();
    assert.equal((await jobs.wait(run_id)).verdict, "PASS");
  });
});

Deno.test("RunJobs.start() refuses a second external run naming the running one, and so does the CLI in the same process", async () => {
  await withDb(async (db, dataDir) => {
    await setUp(db);
    const held = heldTarget(new VirtualClock(), 1);
    // The process's own lock, shared with every external run of this process.
    const jobs = manager(db, dataDir, () => held.transport, {
      processLock: true,
    });
    const { run_id } = await jobs.start({ targetId: TARGET_ID });
    await held.reached;
    assert.equal(jobs.active, run_id);
    await assert.rejects(
      () => jobs.start({ targetId: TARGET_ID }),
      (error: Error) =>
        error instanceof RunBusyError && error.runningRunId === run_id &&
        error.message.includes(run_id),
    );
    const io = captureIo();
    const code = await main([
      "external-run",
      "--target",
      TARGET_ID,
      "--data-dir",
      dataDir,
    ], io);
    assert.equal(code, 2);
    assert.match(io.stderr(), new RegExp(`run ${run_id} is still running`));
    held.release();
    await jobs.wait(run_id);
    assert.equal(jobs.active, null);
  });
});

Deno.test("RunJobs.cancel() ends the window early and the run completes INCONCLUSIVE after cleanup", async () => {
  await withDb(async (db, dataDir) => {
    await setUp(db);
    const held = heldTarget(new VirtualClock(), 1);
    const jobs = manager(db, dataDir, () => held.transport);
    const { run_id } = await jobs.start({ targetId: TARGET_ID });
    await held.reached;
    assert.equal(jobs.cancel(run_id), true);
    held.release();
    const done = await jobs.wait(run_id);
    assert.equal(done.state, "completed");
    assert.equal(done.verdict, "INCONCLUSIVE");
    assert.ok(done.report?.findings.some((f) => f.code === "interrupted"));
    assert.equal(done.report?.cleanup.cleanup_complete, true);
    assert.equal(jobs.cancel(run_id), false);
  });
});

Deno.test("RunJobs replays a saved regression and reports the regression after it", async () => {
  await withDb(async (db, dataDir) => {
    await setUp(db);
    const failing = (clock: VirtualClock, behaviour: FakeBehaviour) =>
      runExternal(CONFIG, {
        db,
        dataDir,
        target: {
          id: TARGET_ID,
          base_url: CONFIG.base_url,
          source: "registered",
        },
        transport: new FakeTarget(clock, behaviour),
        clock,
        trace: false,
      });
    const clock = new VirtualClock();
    const { report } = await failing(clock, { staleCache: true });
    const { regression } = await saveRun(db, report.run_id);
    const jobs = manager(db, dataDir, (c) => new FakeTarget(c));
    const started = await jobs.start({
      regressionId: regression.regression_id,
    });
    assert.equal(started.regression_id, regression.regression_id);
    assert.equal(started.target_id, TARGET_ID);
    const done = await jobs.wait(started.run_id);
    assert.equal(done.verdict, "PASS");
    assert.equal(done.regression_id, regression.regression_id);
    assert.equal(done.regression?.status, "enforced");
    assert.equal(done.regression?.last_run_id, started.run_id);
    const shown = await viewRun(db, started.run_id, { dataDir });
    assert.equal(shown.regression_id, regression.regression_id);
  });
});

Deno.test("RunJobs.start() refuses an unknown target or regression before any run", async () => {
  await withDb(async (db, dataDir) => {
    await setUp(db);
    let built = 0;
    const jobs = manager(db, dataDir, (clock) => {
      built++;
      return new FakeTarget(clock);
    });
    await assert.rejects(
      () => jobs.start({ targetId: "nope" }),
      (error: Error) =>
        error instanceof NotFoundError && /target "nope"/.test(error.message),
    );
    await assert.rejects(
      () => jobs.start({ regressionId: "reg-nope" }),
      NotFoundError,
    );
    assert.equal(built, 0);
    assert.equal(jobs.active, null);
  });
});

Deno.test("RunJobs ends the refusal of an unset token_env with the remedy of its process, keeping the error's code", async () => {
  await withDb(async (db, dataDir) => {
    await migrate(db, ALL_MIGRATIONS);
    const variable = `TRACE_TEST_${"A".repeat(100)}`;
    await registerTarget(db, {
      targetId: "staging-token",
      config: stagingConfig({
        base_url: "https://127.0.0.1:1",
        token_env: variable,
      }),
      source: "registered",
    });
    const options = { db, dataDir, trace: false, env: () => undefined };
    const refusal = async (jobs: RunJobs) => {
      const thrown = await jobs.start({ targetId: "staging-token" }).then(
        () => assert.fail("started"),
        (error: unknown) => error,
      );
      assert.ok(thrown instanceof TokenEnvUnsetError);
      assert.ok(thrown instanceof ConfigError);
      assert.equal(thrown.code, "config_invalid");
      assert.equal(thrown.variable, variable);
      assert.equal(jobs.active, null);
      return thrown.message;
    };
    const shown = `${variable.slice(0, 80)}… (${variable.length} characters)`;
    assert.equal(
      await refusal(new RunJobs(options)),
      `Cannot read bearer token: environment variable ${shown} is unset or empty; set it or remove token_env`,
    );
    const restart = new RunJobs({
      ...options,
      tokenEnvRemedy: (name) => `restart this server with ${name} set`,
    });
    assert.equal(
      await refusal(restart),
      `Cannot read bearer token: environment variable ${shown} is unset or empty; restart this server with ${shown} set`,
    );
  });
});

/** A process that starts a job against a target that never answers, prints its run id and waits to be killed. */
const STARTER = `
import { openDb } from "./lib/db.ts";
import { RunJobs } from "./lib/runs/mod.ts";
const dataDir = Deno.args[0];
const db = await openDb({ dataDir });
const jobs = new RunJobs({
  db,
  dataDir,
  trace: false,
  transport: () => ({ post: () => new Promise(() => {}) }),
});
const started = await jobs.start({ targetId: "${TARGET_ID}" });
await Deno.stdout.write(new TextEncoder().encode(started.run_id + "\\n"));
await new Promise(() => {});
`;

Deno.test("a job whose process is gone is interrupted and INCONCLUSIVE for a new manager", async () => {
  await withDb(async (db, dataDir) => {
    await setUp(db);
    const child = new Deno.Command(Deno.execPath(), {
      args: ["eval", STARTER, dataDir],
      cwd: new URL("..", import.meta.url).pathname,
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    let runId = "";
    try {
      const reader = child.stdout.pipeThrough(new TextDecoderStream())
        .getReader();
      let seen = "";
      while (!seen.includes("\n")) {
        const { value, done } = await reader.read();
        if (done) break;
        seen += value;
      }
      reader.releaseLock();
      runId = seen.trim();
      assert.match(runId, /^run-/, "the starter printed no run id");
    } finally {
      child.kill("SIGKILL");
      await child.status;
      await child.stdout.cancel().catch(() => {});
      await child.stderr.cancel().catch(() => {});
    }
    const view = await new RunJobs({ db, dataDir }).get(runId);
    assert.equal(view.state, "interrupted");
    assert.equal(view.verdict, "INCONCLUSIVE");
    assert.equal(view.report, null);
    assert.match(view.note ?? "", /synthetic id\(s\) may remain/);
  });
});
