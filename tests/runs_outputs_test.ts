/**
 * Where a run's results go: stdout always, `-` as stdout, result files that
 * are replaced only with --force, never left empty or partial, and never
 * lost when both the ledger and the fallback file fail.
 */

import assert from "node:assert/strict";
import { createClient } from "@libsql/client";
import { main } from "../cli.ts";
import { SAME_SIGNAL_MS } from "../cli/_io.ts";
import { dataFlagsOf, runContractCommand } from "../cli/_run_outputs.ts";
import { type DemoServer, startDemoServer } from "../cli/demo.ts";
import type { DemoDefect } from "../lib/demo/defects.ts";
import { StorageError } from "../lib/errors.ts";
import { processIdentity } from "../lib/runner/process_identity.ts";
import {
  type CapturedIo,
  captureIo,
  exists,
  spawnCli,
  withTempDir,
} from "./_helpers.ts";

/** The pause of a person pressing Ctrl-C again: sooner is the same Ctrl-C delivered twice. */
function pressedAgain(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, SAME_SIGNAL_MS * 2));
}

const CLI = new URL("../cli.ts", import.meta.url).pathname;

/** Whether `path` exists, from inside a synchronous getter. */
function existsSync(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}

async function withDemo<T>(
  defect: DemoDefect | null,
  fn: (demo: DemoServer) => Promise<T>,
): Promise<T> {
  const demo = await startDemoServer({ defect });
  try {
    return await fn(demo);
  } finally {
    await demo.shutdown();
  }
}

async function writeConfig(
  dir: string,
  url: string,
  windowSeconds = 0.3,
): Promise<string> {
  const path = `${dir}/staging.json`;
  await Deno.writeTextFile(
    path,
    JSON.stringify({
      base_url: url,
      environment: "staging",
      allow_synthetic_writes: true,
      document_count: 1,
      deletion_window_seconds: windowSeconds,
      sample_interval_seconds: Math.min(0.1, windowSeconds),
    }),
  );
  return path;
}

async function trace(args: string[], io: CapturedIo = captureIo()) {
  const code = await main(args, io);
  return { code, out: io.stdout(), err: io.stderr() };
}

Deno.test({
  name:
    "a completed run whose report neither the ledger nor the fallback file can take still prints it, leaving no partial file",
  ignore: Deno.build.os !== "linux",
  fn: async () => {
    await withTempDir(async (dir) => {
      await withDemo(null, async (demo) => {
        const data = `${dir}/data`;
        const config = await writeConfig(dir, demo.url);
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
        // The database refuses new run rows, as a full disk would.
        const raw = createClient({ url: `file:${data}/trace.db` });
        await raw.execute(
          "CREATE TRIGGER full_disk BEFORE INSERT ON ledger_entries WHEN NEW.kind = 'run' BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END",
        );
        raw.close();
        // And the fallback report file lands on a full device.
        const io = captureIo();
        const err = io.err;
        io.err = (text) => {
          const checkpoint = /checkpoint: (\S+)\.json\n/.exec(text)?.[1];
          if (checkpoint) {
            Deno.symlinkSync("/dev/full", `${checkpoint}.report.json`);
          }
          err(text);
        };
        const run = await trace([
          "external-run",
          "--target",
          "demo",
          "--json",
          "--data-dir",
          data,
        ], io);
        const report = JSON.parse(run.out);
        assert.equal(report.verdict, "PASS");
        assert.equal(report.state, "completed");
        assert.match(
          run.err,
          /warning: Cannot keep run \S+ anywhere \(.*database or disk is full; and .*\.report\.json: [^)]+\); its report is only on stdout/,
        );
        assert.equal(run.code, 2, "a PASS that was not kept must not exit 0");
        for await (const entry of Deno.readDir(`${data}/external`)) {
          const path = `${data}/external/${entry.name}`;
          assert.doesNotMatch(entry.name, /\.tmp$/);
          if (entry.isFile) assert.ok((await Deno.stat(path)).size > 0, path);
        }
      });
    });
  },
});

Deno.test("--output - writes the report to stdout, and - is stdout for --junit and --summary-md too", async () => {
  await withTempDir(async (dir) => {
    await withDemo(null, async (demo) => {
      const config = await writeConfig(dir, demo.url);
      const run = async (...flags: string[]) =>
        await new Deno.Command(Deno.execPath(), {
          args: [
            "run",
            "-A",
            CLI,
            "external-run",
            "--config",
            config,
            "--data-dir",
            `${dir}/data`,
            ...flags,
          ],
          cwd: dir,
          stdout: "piped",
          stderr: "piped",
        }).output();
      const output = await run("--output", "-");
      assert.equal(output.code, 0, new TextDecoder().decode(output.stderr));
      const report = JSON.parse(new TextDecoder().decode(output.stdout));
      assert.equal(report.schema, "trace.run-report/1");
      assert.equal(await exists(`${dir}/-`), false);
      const junit = await run("--junit", "-");
      assert.match(
        new TextDecoder().decode(junit.stdout),
        /^<\?xml version="1.0"/,
      );
      const both = await run("--output", "-", "--json");
      assert.equal(both.code, 2);
      assert.match(
        new TextDecoder().decode(both.stderr),
        /Cannot write --output to stdout: --json writes there too/,
      );
      assert.equal(await exists(`${dir}/-`), false);
    });
  });
});

Deno.test("output files are replaced only with --force, and never while another live run holds them", async () => {
  await withTempDir(async (dir) => {
    await withDemo(null, async (demo) => {
      const config = await writeConfig(dir, demo.url);
      const data = ["--data-dir", `${dir}/data`];
      const out = `${dir}/reports/run.json`;
      const first = await trace([
        "external-run",
        "--config",
        config,
        "--output",
        out,
        ...data,
      ]);
      assert.equal(first.code, 0, first.err);
      const firstId = JSON.parse(await Deno.readTextFile(out)).run_id;
      const again = await trace([
        "external-run",
        "--config",
        config,
        "--output",
        out,
        ...data,
      ]);
      assert.equal(again.code, 2);
      assert.equal(
        again.err,
        `trace external-run: Cannot write --output ${out}: the file already exists; choose a new path or pass --force to replace it\n`,
      );
      const forced = await trace([
        "external-run",
        "--config",
        config,
        "--output",
        out,
        "--force",
        ...data,
      ]);
      assert.equal(forced.code, 0, forced.err);
      assert.notEqual(JSON.parse(await Deno.readTextFile(out)).run_id, firstId);

      // A path a live run reserved (this very process) is refused even with --force.
      const held = `${dir}/reports/held.xml`;
      const placeholder =
        `trace: reserved for the result of a run in process ${Deno.pid} (${
          processIdentity(Deno.pid) ?? "unknown"
        }) token 00000000-0000-0000-0000-000000000000; replaced when it finishes\n`;
      await Deno.writeTextFile(held, placeholder);
      const live = await trace([
        "external-run",
        "--config",
        config,
        "--junit",
        held,
        "--force",
        ...data,
      ]);
      assert.equal(live.code, 2);
      assert.match(
        live.err,
        new RegExp(
          `Cannot write --junit .*held\\.xml: another run reserved it \\(process ${Deno.pid}, still running\\)`,
        ),
      );
      assert.equal(await Deno.readTextFile(held), placeholder);
    });
  });
});

Deno.test("no output replaces the ledger, its sidecars or a checkpoint, even with --force, nor lands among the checkpoints, nor waits on a FIFO", async () => {
  await withTempDir(async (dir) => {
    await withDemo(null, async (demo) => {
      const config = await writeConfig(dir, demo.url);
      const data = ["--data-dir", `${dir}/data`];
      // Before the database exists, an output naming it is refused for what it is.
      const first = await trace([
        "external-run",
        "--config",
        config,
        "--output",
        `${dir}/data/trace.db`,
        ...data,
      ]);
      assert.equal(first.code, 2);
      assert.match(
        first.err,
        /--output .*trace\.db: it is the database this command uses \(or one of its files\); choose another path/,
      );
      assert.equal(
        await Deno.stat(`${dir}/data`).then(() => true, () => false),
        false,
      );
      const run = await trace(["external-run", "--config", config, ...data]);
      assert.equal(run.code, 0, run.err);
      const ledger = `${dir}/data/trace.db`;
      const before = await Deno.readFile(ledger);
      const [checkpoint] = [...Deno.readDirSync(`${dir}/data/external`)];
      const cases: [string, string, RegExp][] = [
        ["--junit", ledger, /it is a SQLite database/],
        [
          "--output",
          `${ledger}-wal`,
          /the write-ahead log of a SQLite database/,
        ],
        [
          "--html",
          `${ledger}-shm`,
          /the shared-memory index of a SQLite database/,
        ],
        [
          "--summary-md",
          `${dir}/data/external/${checkpoint!.name}`,
          /it is a run's checkpoint/,
        ],
      ];
      for (const [flag, path, why] of cases) {
        const refused = await trace([
          "external-run",
          "--config",
          config,
          flag,
          path,
          "--force",
          ...data,
        ]);
        assert.equal(refused.code, 2, `${flag} ${path}`);
        assert.match(refused.err, why);
        assert.match(
          refused.err,
          /\(not even with --force\); choose another path/,
        );
      }
      assert.deepEqual(await Deno.readFile(ledger), before);
      // A new file among the checkpoints would be read as a broken one.
      for (const flag of ["--output", "--junit"]) {
        const inside = `${dir}/data/external/my-report.json`;
        const refused = await trace([
          "external-run",
          "--config",
          config,
          flag,
          inside,
          ...data,
        ]);
        assert.equal(refused.code, 2, flag);
        assert.match(
          refused.err,
          new RegExp(
            `Cannot write ${flag} .*my-report\\.json: .*holds run checkpoints, which Trace reads as its own .*; write it outside the data directory's external/ folder`,
          ),
        );
        assert.equal(
          await Deno.stat(inside).then(() => true, () => false),
          false,
        );
      }
      // Nor over the erasure key, which Trace reads as its own.
      const key = await trace([
        "external-run",
        "--config",
        config,
        "--summary-md",
        `${dir}/data/erasure.key`,
        ...data,
      ]);
      assert.equal(key.code, 2);
      assert.match(
        key.err,
        /Cannot write --summary-md .*erasure\.key: it is the data directory's erasure key, which Trace reads as its own; write it elsewhere/,
      );
      const runs = await trace(["external-runs", "--json", ...data]);
      assert.equal(JSON.parse(runs.out).runs.length, 1);
      const shown = await trace([
        "external-show",
        JSON.parse(runs.out).runs[0].run_id,
        "--html",
        ledger,
        "--force",
        ...data,
      ]);
      assert.equal(shown.code, 2);
      assert.deepEqual(await Deno.readFile(ledger), before);
      const runId = JSON.parse(runs.out).runs[0].run_id;
      // Reading a FIFO's first bytes would wait for a writer forever.
      const fifo = `${dir}/page.fifo`;
      await new Deno.Command("mkfifo", { args: [fifo] }).output();
      for (
        const [path, why] of [
          [`${ledger}/page.html`, "a part of the path is not a directory"],
          [dir, "it is a directory; name a file"],
          [fifo, "it is not a regular file; name a file"],
        ] as const
      ) {
        const refused = await trace([
          "external-show",
          runId,
          "--html",
          path,
          "--json",
          ...data,
        ]);
        assert.equal(refused.code, 2, path);
        assert.deepEqual(JSON.parse(refused.out).error, {
          code: "usage",
          message: `Cannot write --html ${path}: ${why}${
            why.startsWith("a part") ? "; check the path" : ""
          }`,
        });
      }
    });
  });
});

Deno.test({
  name:
    "a second Ctrl-C removes the reserved result files, so the next run can use the same paths",
  ignore: Deno.build.os === "windows",
  fn: async () => {
    await withTempDir(async (dir) => {
      // stale-cache keeps cleanup polling through the whole window after the first Ctrl-C.
      await withDemo("stale-cache", async (demo) => {
        const config = await writeConfig(dir, demo.url, 30);
        const outputs = [
          ["--output", `${dir}/out/report.json`],
          ["--junit", `${dir}/out/junit.xml`],
          ["--summary-md", `${dir}/out/summary.md`],
        ];
        const run = spawnCli([
          "external-run",
          "--config",
          config,
          "--data-dir",
          `${dir}/data`,
          ...outputs.flat(),
        ]);
        try {
          await run.waitFor(/checkpoint: /);
          for (const [, path] of outputs) assert.ok(await exists(path!));
          // In the window: the stale cache then keeps cleanup polling until the second Ctrl-C.
          await run.waitFor(/progress: sample #1 /);
          run.child.kill("SIGINT");
          await run.waitFor(/interrupted: finishing up/);
          await pressedAgain();
          run.child.kill("SIGINT");
          await run.waitFor(/interrupted again/);
        } catch (error) {
          await run.finish();
          throw error;
        }
        const { code } = await run.finish();
        assert.equal(code, 130, run.seen());
        for (const [, path] of outputs) {
          assert.equal(await exists(path!), false, `${path} was left behind`);
        }
      });
    });
  },
});

Deno.test("a Ctrl-C while the result files are reserved stops the run before it starts: the reason in --junit, no placeholder left", async () => {
  await withTempDir(async (dir) => {
    await withDemo(null, async (demo) => {
      const config = await writeConfig(dir, demo.url);
      const report = `${dir}/out/report.json`;
      const junit = `${dir}/out/junit.xml`;
      const ctrlC = new AbortController();
      let reservedBeforeHandlers: boolean | null = null;
      const io = {
        ...captureIo(),
        // Reading it installs the handlers; the Ctrl-C comes at that moment.
        get interrupted() {
          if (reservedBeforeHandlers === null) {
            reservedBeforeHandlers = existsSync(report) || existsSync(junit);
            ctrlC.abort();
          }
          return ctrlC.signal;
        },
      };
      const code = await main([
        "external-run",
        "--config",
        config,
        "--data-dir",
        `${dir}/data`,
        "--output",
        report,
        "--junit",
        junit,
      ], io);
      assert.equal(code, 2, io.stderr());
      assert.equal(
        reservedBeforeHandlers,
        false,
        "the handlers are installed before any file is reserved",
      );
      assert.match(
        io.stderr(),
        /trace external-run: Interrupted before the run started: nothing was sent to the staging adapter or recorded; run the same command again\n$/,
      );
      assert.equal(await exists(report), false, "no placeholder left");
      const xml = await Deno.readTextFile(junit);
      assert.match(xml, /<testcase name="run did not start"/);
      assert.match(xml, /Interrupted before the run started/);
      assert.equal(await exists(`${dir}/data/external`), false, "no run");
    });
  });
});

Deno.test("a run that throws after it started still writes --junit and --summary-md saying it did not finish, with its checkpoint and the cleanup command", async () => {
  await withTempDir(async (dir) => {
    const data = `${dir}/data`;
    const out = `${dir}/out`;
    const runId = "run-20990101T000000Z-0000000000e1";
    const checkpointPath = `${data}/external/${runId}.json`;
    const io = captureIo();
    await assert.rejects(
      () =>
        runContractCommand(io, {
          values: {
            "data-dir": data,
            output: `${out}/report.json`,
            junit: `${out}/junit.xml`,
            "summary-md": `${out}/summary.md`,
          },
          prepare: () => Promise.resolve(null),
          start: (_db, hooks) => {
            hooks.onStart?.({ runId, checkpointPath });
            throw new StorageError("Cannot append the run to the ledger");
          },
        }),
      /Cannot append the run to the ledger/,
    );
    const cleanup = `trace external-cleanup ${runId} --data-dir ${data}`;
    assert.ok(
      io.stderr().includes(
        `run ${runId} stopped on an error before its report, so synthetic records may remain in the staging app (its checkpoint ${checkpointPath} lists them); remove them with: ${cleanup}\n`,
      ),
      io.stderr(),
    );
    assert.match(
      io.stderr(),
      /junit: \S+junit\.xml \(the run did not finish\)\nsummary: \S+summary\.md \(the run did not finish\)\n$/,
    );
    const junit = await Deno.readTextFile(`${out}/junit.xml`);
    assert.match(junit, /<testcase name="run did not finish"/);
    assert.match(junit, /<property name="state" value="unfinished"\/>/);
    assert.ok(junit.includes(`<property name="run_id" value="${runId}"/>`));
    assert.ok(junit.includes(cleanup), junit);
    const summary = await Deno.readTextFile(`${out}/summary.md`);
    assert.match(summary, /^### Trace deletion contract: did not finish\n/);
    assert.ok(summary.includes(`\`\`\`sh\n${cleanup}\n\`\`\``), summary);
    // No report, so no report file.
    assert.equal(await exists(`${out}/report.json`), false);
  });
});

Deno.test("the README's example outputs go to the git-ignored reports/ directory", async () => {
  const readme = await Deno.readTextFile(
    new URL("../README.md", import.meta.url),
  );
  const commands = readme.split("\n").filter((line) =>
    line.startsWith("trace ")
  );
  const paths = commands.flatMap((line) =>
    [...line.matchAll(/--(?:output|junit|summary-md) (\S+)/g)].map((m) => m[1]!)
  );
  assert.ok(paths.length > 0);
  for (const path of paths) assert.match(path, /^(reports\/|\/tmp\/|-$)/, path);
  const ignore = await Deno.readTextFile(
    new URL("../.gitignore", import.meta.url),
  );
  assert.match(ignore, /^\/reports\/$/m);
});

Deno.test("printed commands name the data directory absolutely, so they work from anywhere", () => {
  assert.equal(
    dataFlagsOf({ "data-dir": "my data" }),
    ` --data-dir '${Deno.cwd()}/my data'`,
  );
  assert.equal(
    dataFlagsOf({ db: "libsql://user:secret@db.example/trace" }),
    " --db libsql://db.example/trace",
  );
});

Deno.test("--summary-md of a PASS lists its transient residual as not failing and heads the rerun 'Run again'", async () => {
  await withTempDir(async (dir) => {
    const demo = await startDemoServer({ defect: "slow-vector", delayMs: 200 });
    try {
      const config = await writeConfig(dir, demo.url, 1);
      const io = captureIo();
      const code = await main([
        "external-run",
        "--config",
        config,
        "--data-dir",
        `${dir}/data`,
        "--summary-md",
        `${dir}/summary.md`,
      ], io);
      assert.equal(code, 0, io.stderr());
    } finally {
      await demo.shutdown();
    }
    const md = await Deno.readTextFile(`${dir}/summary.md`);
    assert.match(
      md,
      /\n- TRANSIENT \(recorded, not failing\) `transient_residual` \(vector_records\): /,
    );
    assert.doesNotMatch(md, /- none|Replay/);
    assert.match(
      md,
      /\n#### Run again\n\n```sh\ntrace external-run --target cfg-/,
    );
  });
});
