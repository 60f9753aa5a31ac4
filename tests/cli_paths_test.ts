/**
 * The lines that name a data file (the ledger a run was recorded in, a
 * checkpoint, a result file, a backup) escape the characters a terminal
 * would act on, as error lines do: a data directory may be named anything.
 * A printed command names it in `$'…'` quoting, escaped and still runnable.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { main } from "../cli.ts";
import { startDemoServer } from "../cli/demo.ts";
import { captureIo, withTempDir } from "./_helpers.ts";

// What no line may carry raw: the controls but the line feed, and the
// format characters (an ESC moves the cursor, U+202E reverses what follows).
// deno-lint-ignore no-control-regex
const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\p{Cf}\u2028\u2029]/u;

Deno.test("the commands that print a path escape an ESC and a U+202E in the data directory's name", async () => {
  await withTempDir(async (parent) => {
    const dir = join(parent, "data\u001b[31m\u202e");
    const shown = join(parent, "data\\u{001b}[31m\\u{202e}");
    const demo = await startDemoServer({ defect: "stale-cache" });
    try {
      const config = join(parent, "staging.json");
      await Deno.writeTextFile(
        config,
        JSON.stringify({
          base_url: demo.url,
          environment: "staging",
          allow_synthetic_writes: true,
          document_count: 1,
          deletion_window_seconds: 0.3,
          sample_interval_seconds: 0.1,
        }),
      );
      const data = ["--data-dir", dir];
      const trace = async (...args: string[]) => {
        const io = captureIo();
        const code = await main([...args, ...data], io);
        const [out, err] = [io.stdout(), io.stderr()];
        const line = `${args[0]}: ${JSON.stringify({ out, err })}`;
        assert.doesNotMatch(out, RAW, line);
        assert.doesNotMatch(err, RAW, line);
        return { code, out, err, line };
      };
      const registered = await trace(
        "external-register",
        "--target",
        "staging",
        "--config",
        config,
      );
      assert.equal(registered.code, 0, registered.line);
      const run = await trace(
        "external-run",
        "--target",
        "staging",
        "--json",
        "--junit",
        join(dir, "junit.xml"),
        "--summary-md",
        join(dir, "summary.md"),
      );
      assert.equal(run.code, 1, run.line);
      for (
        const line of [
          `checkpoint: ${shown}/external/`,
          `ledger: run `,
          ` recorded in ${shown}/trace.db`,
          `junit: ${shown}/junit.xml\n`,
          `summary: ${shown}/summary.md\n`,
          // A printed command quotes the name so that it still runs.
          ` --data-dir $'${parent}/data\\u001b[31m\\u202e'\n`,
        ]
      ) assert.ok(run.err.includes(line), `${line} in ${run.line}`);
      const runId = JSON.parse(run.out).run_id;
      const cleanup = await trace("external-cleanup", runId);
      // The stale cache stays: the cleanup is incomplete, and recorded.
      assert.equal(cleanup.code, 2, cleanup.line);
      assert.ok(
        cleanup.out.includes(` in ${shown}/trace.db (entry `),
        cleanup.line,
      );
      const html = await trace(
        "external-show",
        runId,
        "--html",
        join(dir, "run.html"),
      );
      assert.equal(html.code, 1, html.line);
      assert.ok(html.err.includes(`html: ${shown}/run.html\n`), html.line);
      const command =
        `trace external-cleanup ${runId} --data-dir $'${parent}/data\\u001b[31m\\u202e'`;
      // The cleanup found the stale cache still serving the text: fix first,
      // then confirm; the Cleanup section says so, once.
      assert.ok(
        html.out.includes(`then run ${command} again to confirm\n`),
        html.line,
      );
      assert.equal(html.out.split("again to confirm").length, 2, html.line);
      const backup = await trace("ledger", "backup", join(dir, "copy.db"));
      assert.equal(backup.code, 0, backup.line);
      assert.ok(
        backup.out.startsWith(
          `backup of ${shown}/trace.db written to ${shown}/copy.db: `,
        ),
        backup.line,
      );
      const reference = await trace("reference", "run", "correct");
      assert.equal(reference.code, 0, reference.line);
      assert.ok(
        reference.err.includes(
          `ledger: 1 reference run(s) recorded in ${shown}/trace.db\n`,
        ),
        reference.line,
      );
    } finally {
      await demo.shutdown();
    }
  });
});

Deno.test("--json answers escape an ESC and a U+202E in the data directory's name and parse to the real path", async () => {
  await withTempDir(async (parent) => {
    const dir = join(parent, "data\u001b[31m\u202e");
    const data = ["--data-dir", dir];
    const trace = async (...args: string[]) => {
      const io = captureIo();
      const code = await main([...args, "--json", ...data], io);
      const [out, err] = [io.stdout(), io.stderr()];
      const line = `${args.join(" ")}: ${JSON.stringify({ out, err })}`;
      assert.doesNotMatch(out, RAW, line);
      assert.doesNotMatch(err, RAW, line);
      return { code, answer: JSON.parse(out), err, line };
    };
    const db = join(dir, "trace.db");
    // Nothing recorded yet: each error names the database it looked for.
    for (
      const args of [
        ["external-runs"],
        ["external-show", "run-20261201T000000Z-aaaaaaaaaaaa"],
        ["ledger", "verify"],
        ["obs", "health"],
      ]
    ) {
      const { answer, line } = await trace(...args);
      assert.ok(answer.error.message.includes(` ${db} `), line);
    }
    const config = join(dir, "staging.json");
    const missing = await trace(
      "external-register",
      "--target",
      "staging",
      "--config",
      config,
    );
    assert.ok(missing.answer.error.message.includes(config), missing.line);
    await Deno.mkdir(dir);
    await Deno.writeTextFile(
      config,
      JSON.stringify({
        base_url: "http://127.0.0.1:9",
        environment: "staging",
        allow_synthetic_writes: true,
      }),
    );
    const registered = await trace(
      "external-register",
      "--target",
      "staging",
      "--config",
      config,
    );
    assert.equal(registered.code, 0, registered.line);
    // A damaged checkpoint: the listing and the run's page name its file.
    const runId = "run-20261201T000000Z-aaaaaaaaaaaa";
    const checkpoint = join(dir, "external", `${runId}.json`);
    await Deno.mkdir(join(dir, "external"));
    await Deno.writeTextFile(checkpoint, "{");
    const runs = await trace("external-runs");
    assert.deepEqual(runs.answer.unreadable, [checkpoint], runs.line);
    assert.ok(
      runs.err.startsWith(
        `warning: ${parent}/data\\u{001b}[31m\\u{202e}/external/${runId}.json cannot be read`,
      ),
      runs.line,
    );
    const show = await trace("external-show", runId);
    assert.ok(show.answer.error.message.includes(checkpoint), show.line);
    const verified = await trace("ledger", "verify");
    assert.equal(verified.answer.ok, true, verified.line);
  });
});

Deno.test("quickstart --json names its report files with the data directory's hidden characters escaped", async () => {
  await withTempDir(async (parent) => {
    const dir = join(parent, "data\u001b[31m\u202e");
    const io = captureIo();
    assert.equal(
      await main(["quickstart", "--json", "--data-dir", dir], io),
      0,
    );
    const out = io.stdout();
    assert.doesNotMatch(out, RAW, JSON.stringify(out));
    const { runs } = JSON.parse(out);
    for (const run of runs) {
      assert.equal(run.report, join(dir, "reports", `${run.run_id}.json`));
    }
  });
});

Deno.test("mcp-config prints a launch command that bash runs with the data directory's real name, and configs that carry it", async () => {
  await withTempDir(async (parent) => {
    const dir = join(parent, "data\u001b[31m\u202e it's");
    const flags = ["--data-dir", dir, "--allow-trace-queries"];
    const json = captureIo();
    assert.equal(await main(["mcp-config", "--json", ...flags], json), 0);
    assert.doesNotMatch(json.stdout(), RAW, json.stdout());
    const spec = JSON.parse(json.stdout());
    assert.equal(spec.args[spec.args.indexOf("--data-dir") + 1], dir);
    const text = captureIo();
    assert.equal(await main(["mcp-config", ...flags], text), 0);
    const out = text.stdout();
    assert.doesNotMatch(out, RAW, out);
    const blocks = out.split("\n\n");
    const mcpServers = JSON.parse(blocks[0]!.replace(/^(#.*\n)+/, ""));
    assert.deepEqual(mcpServers.mcpServers.trace.args, spec.args);
    const vscode = JSON.parse(blocks[1]!.replace(/^(#.*\n)+/, ""));
    assert.deepEqual(vscode.servers.trace.args, spec.args);
    const command = blocks[2]!.replace(/^(#.*\n)+/, "");
    assert.equal(command, spec.command_line);
    // bash reads the printed line back into the very words a client runs
    // (a `\u` escape decodes only under a UTF-8 locale, as a terminal that
    // shows such a name runs).
    const words = new Deno.Command("bash", {
      args: ["-c", `set -- ${command}; printf '%s\\0' "$@"`],
      env: { LC_ALL: "C.UTF-8" },
    }).outputSync();
    assert.equal(words.code, 0, new TextDecoder().decode(words.stderr));
    assert.deepEqual(
      new TextDecoder().decode(words.stdout).split("\0").slice(0, -1),
      ["TRACE_MCP_ALLOW_TRACE_QUERIES=true", spec.command, ...spec.args],
    );
  });
});
