/**
 * Ctrl-C during `trace external-run`: the run still cleans up (for a bounded
 * time, with progress), records an INCONCLUSIVE `interrupted` run that cannot
 * be saved as a regression, and a second Ctrl-C exits at once.
 */

import assert from "node:assert/strict";
import {
  type DemoServer,
  type DemoServerOptions,
  startDemoServer,
} from "../cli/demo.ts";
import { main } from "../cli.ts";
import { SAME_SIGNAL_MS } from "../cli/_io.ts";
import { captureIo, type CliChild, spawnCli, withTempDir } from "./_helpers.ts";

/** The pause of a person pressing Ctrl-C again: sooner is the same Ctrl-C delivered twice. */
function pressedAgain(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, SAME_SIGNAL_MS * 2));
}

async function waitForIssuedControl(path: string): Promise<void> {
  for (let i = 0; i < 2400; i++) {
    try {
      const checkpoint = JSON.parse(await Deno.readTextFile(path));
      if (checkpoint.issued.control.length === 1) return;
    } catch {
      // Not written yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`checkpoint ${path} never listed the control id`);
}

Deno.test({
  name:
    "trace external-run cleans up after SIGINT and exits 2 with an interrupted finding",
  ignore: Deno.build.os === "windows",
  fn: async () => {
    await withSpawnedRun({}, 30, async (run, _dir, demo) => {
      // The whole line, so the path is not cut where a read ended.
      const [, path] = await run.waitFor(/checkpoint: (\S+)\n/);
      await waitForIssuedControl(path!);
      await new Promise((resolve) => setTimeout(resolve, 700));
      run.child.kill("SIGINT");
      const { code, stdout } = await run.finish();
      assert.equal(code, 2, run.seen());
      const report = JSON.parse(stdout);
      assert.equal(report.verdict, "INCONCLUSIVE");
      assert.ok(
        report.findings.some((f: { code: string }) => f.code === "interrupted"),
      );
      assert.equal(report.cleanup.cleanup_complete, true);
      for (const namespace of Object.values(report.namespaces)) {
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
    });
  },
});

/**
 * Runs `fn` with `trace external-run --json` spawned against a fresh demo
 * app (started with `demo`) whose deletion window is `windowSeconds`.
 */
async function withSpawnedRun(
  demoOptions: DemoServerOptions,
  windowSeconds: number,
  fn: (run: CliChild, dir: string, demo: DemoServer) => Promise<void>,
): Promise<void> {
  const demo = await startDemoServer(demoOptions);
  try {
    await withTempDir(async (dir) => {
      const run = spawnRun(
        await writeRunConfig(dir, demo.url, windowSeconds),
        dir,
      );
      await fn(run, dir, demo);
    });
  } finally {
    await demo.shutdown();
  }
}

/** A running `trace external-run --json` whose stderr can be awaited line by line. */
function spawnRun(config: string, dir: string): CliChild {
  return spawnCli([
    "external-run",
    "--config",
    config,
    "--json",
    "--data-dir",
    dir,
  ]);
}

async function writeRunConfig(
  dir: string,
  url: string,
  windowSeconds: number,
): Promise<string> {
  const config = `${dir}/staging.json`;
  await Deno.writeTextFile(
    config,
    JSON.stringify({
      base_url: url,
      environment: "staging",
      allow_synthetic_writes: true,
      deletion_window_seconds: windowSeconds,
      sample_interval_seconds: 0.5,
    }),
  );
  return config;
}

Deno.test({
  name:
    "trace external-run interrupted while slow vectors linger is INCONCLUSIVE and interrupted, and external-save refuses it",
  ignore: Deno.build.os === "windows",
  fn: async () => {
    // Left alone this app passes: its vectors go 3 s after the deletion, inside the 8 s window.
    await withSpawnedRun(
      {
        defect: "slow-vector",
        delayMs: 3000,
      },
      8,
      async (run, dir) => {
        // Off a terminal, every sample is a plain progress line.
        await run.waitFor(
          /progress: sample #2 at \S+ s of the 8 s window: source 0, vector 3, cache 0; marker gone; control ok\n/,
        );
        run.child.kill("SIGINT");
        const { code, stdout } = await run.finish();
        const stderr = run.seen();
        assert.equal(code, 2, stderr);
        const report = JSON.parse(stdout);
        assert.equal(report.state, "interrupted");
        assert.equal(report.verdict, "INCONCLUSIVE");
        assert.equal(report.samples.at(-1).inventory.vector_records, 3);
        assert.deepEqual(
          report.findings
            .filter((f: { severity: string }) => f.severity !== "note")
            .map((f: { code: string }) => f.code),
          ["interrupted"],
        );
        assert.equal(report.cleanup.interrupted, true);
        // What is left of the 8 s after the interrupt: the moments between
        // the interrupt and cleanup's start are spent already.
        assert.ok(
          report.cleanup.limit_seconds > 6 &&
            report.cleanup.limit_seconds <= 8,
          `${report.cleanup.limit_seconds}`,
        );
        assert.equal(report.cleanup.cleanup_complete, true);
        assert.match(
          stderr,
          /progress: interrupted during window: no verdict without the final sample; stopping within 14 s, cleanup included \(requests end by 8 s,/,
        );
        assert.match(
          stderr,
          /progress: cleanup: deleting every issued id, then polling both namespaces until clean, for at most (8|[67]\.\d+) s \(what is left after the interrupt\)\n/,
        );
        assert.match(stderr, /progress: cleanup poll #1 at /);
        assert.match(
          stderr,
          new RegExp(`ledger: run ${report.run_id} recorded`),
        );
        assert.doesNotMatch(stderr, /replay: /);

        const save = captureIo();
        assert.equal(
          await main(["external-save", report.run_id, "--data-dir", dir], save),
          2,
        );
        assert.match(
          save.stderr(),
          new RegExp(
            `Cannot save run ${report.run_id} as a regression: it is interrupted`,
          ),
        );
      },
    );
  },
});

Deno.test({
  name:
    "trace external-run after one Ctrl-C polls cleanup for a bounded time, and a second Ctrl-C exits at once",
  ignore: Deno.build.os === "windows",
  fn: async () => {
    // A stale cache never cleans up: only the bound ends the polling.
    await withSpawnedRun(
      { defect: "stale-cache" },
      3600,
      async (run, dir) => {
        await run.waitFor(/progress: sample #1 /);
        run.child.kill("SIGINT");
        await run.waitFor(
          /for at most (30|29\.\d) s \(what is left after the interrupt\)\n[^]*progress: cleanup poll #1 at \S+ s of at most (30|29\.\d) s: not clean yet\n/,
        );
        await pressedAgain();
        run.child.kill("SIGINT");
        const { code, stdout } = await run.finish();
        assert.equal(code, 130, run.seen());
        // --json: the one object on stdout is the error, with the exit note.
        const answer = JSON.parse(stdout);
        assert.equal(answer.error.code, "interrupted");
        assert.match(
          answer.error.message,
          /remove them with: trace external-cleanup run-/,
        );
        assert.match(run.seen(), /interrupted again: exiting now\n/);
        // The run id, what may remain, and the command that removes it.
        const runId = run.seen().match(/checkpoint: \S+\/(run-[^/\s]+)\.json/)
          ?.[1];
        assert.ok(runId, run.seen());
        assert.ok(
          run.seen().includes(
            `exiting now\nrun ${runId} stopped before its cleanup finished, so synthetic records may remain in the staging app; remove them with: trace external-cleanup ${runId} --data-dir ${dir}\n`,
          ),
          run.seen(),
        );
      },
    );
  },
});

Deno.test({
  name:
    "one Ctrl-C delivered twice at once (the terminal's and the one deno task passes on) stops the run cleanly, not at once",
  ignore: Deno.build.os === "windows",
  fn: async () => {
    await withSpawnedRun({}, 30, async (run) => {
      await run.waitFor(/progress: sample #1 /);
      run.child.kill("SIGINT");
      run.child.kill("SIGINT");
      const { code, stdout } = await run.finish();
      assert.equal(code, 2, run.seen());
      assert.doesNotMatch(run.seen(), /interrupted again/);
      const report = JSON.parse(stdout);
      assert.equal(report.state, "interrupted");
      assert.equal(report.cleanup.cleanup_complete, true);
    });
  },
});
