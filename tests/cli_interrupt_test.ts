/** Ctrl-C during `trace external-run` still cleans up and records an INCONCLUSIVE run. */

import assert from "node:assert/strict";
import { startDemoServer } from "../cli/demo.ts";
import { withTempDir } from "./_helpers.ts";

const CLI = new URL("../cli.ts", import.meta.url).pathname;

async function waitForIssuedControl(path: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
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
    const demo = await startDemoServer();
    try {
      await withTempDir(async (dir) => {
        const config = `${dir}/staging.json`;
        await Deno.writeTextFile(
          config,
          JSON.stringify({
            base_url: demo.url,
            environment: "staging",
            allow_synthetic_writes: true,
            deletion_window_seconds: 30,
            sample_interval_seconds: 0.5,
          }),
        );
        const child = new Deno.Command(Deno.execPath(), {
          args: [
            "run",
            "-A",
            CLI,
            "external-run",
            "--config",
            config,
            "--json",
            "--data-dir",
            dir,
          ],
          env: { NO_COLOR: "1" },
          stdout: "piped",
          stderr: "piped",
        }).spawn();
        const stderr = child.stderr.pipeThrough(new TextDecoderStream())
          .getReader();
        let seen = "";
        while (!seen.includes("checkpoint: ")) {
          const { value, done } = await stderr.read();
          if (done) break;
          seen += value;
        }
        const path = seen.match(/checkpoint: (\S+)/)?.[1];
        assert.ok(path, seen);
        await waitForIssuedControl(path);
        await new Promise((resolve) => setTimeout(resolve, 700));
        child.kill("SIGINT");
        const [status, stdout] = await Promise.all([
          child.status,
          new Response(child.stdout).text(),
          (async () => {
            while (!(await stderr.read()).done) { /* drain */ }
          })(),
        ]);
        assert.equal(status.code, 2, seen);
        const report = JSON.parse(stdout);
        assert.equal(report.verdict, "INCONCLUSIVE");
        assert.ok(
          report.findings.some((f: { code: string }) =>
            f.code === "interrupted"
          ),
        );
        assert.equal(report.cleanup.cleanup_complete, true);
        for (const namespace of Object.values(report.namespaces)) {
          const inventory = await fetch(`${demo.url}/inventory`, {
            method: "POST",
            body: JSON.stringify({ namespace }),
          }).then((r) => r.json());
          assert.equal(
            inventory.source_records + inventory.vector_records +
              inventory.cache_records,
            0,
          );
        }
      });
    } finally {
      await demo.shutdown();
    }
  },
});
