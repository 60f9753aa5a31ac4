/** `--html FILE` on external-run, external-replay and external-show: the run's page as one self-contained file. */

import assert from "node:assert/strict";
import { escapeRegExp } from "../lib/regexp.ts";
import { join } from "node:path";
import { main } from "../cli.ts";
import { migrate } from "../lib/db.ts";
import { ALL_MIGRATIONS } from "../lib/migrations.ts";
import { captureIo, withDb } from "./_helpers.ts";
import { interruptedCheckpoint, withDemoTarget } from "./browser/_runs.ts";

/** What a self-contained run file must and must not hold. */
function assertStandalone(html: string, verdict: string): void {
  assert.ok(html.startsWith("<!DOCTYPE html>"));
  assert.doesNotMatch(html, /<script/i, "no script");
  assert.doesNotMatch(html, /<link\s/i, "no linked stylesheet or icon");
  assert.doesNotMatch(html, /\s(src|href)="(https?:)?\/\//i, "nothing fetched");
  assert.doesNotMatch(html, /href="\/(?!\/)/, "no link into the server");
  assert.match(html, /<style>[^<]*\.badge/, "the stylesheet is inline");
  assert.match(html, /<svg[^>]*aria-labelledby="timeline-caption"/);
  assert.match(html, new RegExp(`badge--lg">${verdict}</span>`));
}

Deno.test("external-run, external-replay and external-show --html write the run's page as one file", async () => {
  await withDb(async (db, dataDir) => {
    await migrate(db, ALL_MIGRATIONS);
    let port = 0;
    const runFile = join(dataDir, "run.html");
    const failIo = captureIo();
    await withDemoTarget(db, "demo", "stale-cache", async (demo) => {
      port = demo.port;
      const code = await main([
        "external-run",
        "--target",
        "demo",
        "--html",
        runFile,
        "--data-dir",
        dataDir,
      ], failIo);
      assert.equal(code, 1, failIo.stderr());
    });
    assert.match(failIo.stderr(), new RegExp(`html: ${runFile}`));
    const failHtml = await Deno.readTextFile(runFile);
    assertStandalone(failHtml, "FAIL");
    const runId = /<code>(run-[\w-]+)<\/code>/.exec(failHtml)![1]!;
    assert.match(failHtml, /Deleted data was still there at the final sample/);
    // Its commands act on the run's own data, as the summary's do.
    assert.match(
      failHtml,
      new RegExp(
        `trace external-cleanup ${runId} --data-dir ${escapeRegExp(dataDir)}`,
      ),
    );

    assert.equal(
      await main(["external-save", runId, "--data-dir", dataDir], captureIo()),
      0,
    );
    const replayFile = join(dataDir, "replay.html");
    await withDemoTarget(db, "demo", null, async () => {
      const io = captureIo();
      const code = await main([
        "external-replay",
        `reg-${runId.slice(4)}`,
        "--html",
        replayFile,
        "--data-dir",
        dataDir,
      ], io);
      assert.equal(code, 0, io.stderr());
    }, { port, register: false });
    const replayHtml = await Deno.readTextFile(replayFile);
    assertStandalone(replayHtml, "PASS");
    assert.match(replayHtml, /Replay of reg-/);

    const showFile = join(dataDir, "show.html");
    const io = captureIo();
    assert.equal(
      await main([
        "external-show",
        runId,
        "--html",
        showFile,
        "--data-dir",
        dataDir,
      ], io),
      1,
    );
    const showHtml = await Deno.readTextFile(showFile);
    assertStandalone(showHtml, "FAIL");
    assert.match(
      showHtml,
      new RegExp(
        `trace external-cleanup ${runId} --data-dir ${escapeRegExp(dataDir)}`,
      ),
    );
    const again = captureIo();
    assert.equal(
      await main([
        "external-show",
        runId,
        "--html",
        showFile,
        "--data-dir",
        dataDir,
      ], again),
      2,
    );
    assert.match(again.stderr(), /Cannot write --html .*already exists/);
  });
});

Deno.test("external-run --html leads with the check the run's evidence points at", async () => {
  await withDb(async (db, dataDir) => {
    await migrate(db, ALL_MIGRATIONS);
    const cases = [
      // Every store read 0 first, then the re-index job wrote the vectors back.
      [
        "vector-resurrect",
        1,
        "Check that an asynchronous indexing or re-embedding worker cannot write vectors back",
      ],
      // The baseline failed because the inventory answered complete: false.
      [
        "partial-inventory",
        2,
        "Check: the inventory enumerates every page and every declared store",
      ],
    ] as const;
    for (const [defect, exit, advice] of cases) {
      const file = join(dataDir, `${defect}.html`);
      await withDemoTarget(db, defect, defect, async () => {
        const io = captureIo();
        const code = await main([
          "external-run",
          "--target",
          defect,
          "--html",
          file,
          "--data-dir",
          dataDir,
        ], io);
        assert.equal(code, exit, io.stderr());
      });
      const html = await Deno.readTextFile(file);
      assert.ok(
        html.includes(`<strong>Next:</strong> ${advice}`),
        `${defect}: ${/Next:<\/strong>[^<]*/.exec(html)?.[0]}`,
      );
    }
  });
});

Deno.test("external-show --html of an interrupted run without a report words its requests from what is there", async () => {
  await withDb(async (db, dataDir) => {
    await migrate(db, ALL_MIGRATIONS);
    // The index exists (another run wrote into it); this run wrote nothing.
    await withDemoTarget(db, "demo", null, async () => {
      assert.equal(
        await main(
          ["external-run", "--target", "demo", "--data-dir", dataDir],
          captureIo(),
        ),
        0,
      );
    });
    const { run_id: runId } = await interruptedCheckpoint(dataDir, "demo");
    const file = join(dataDir, "interrupted.html");
    const io = captureIo();
    assert.equal(
      await main(
        ["external-show", runId, "--html", file, "--data-dir", dataDir],
        io,
      ),
      2,
      io.stderr(),
    );
    const requests = /<section[^>]*id="requests"[\s\S]*?<\/section>/.exec(
      await Deno.readTextFile(file),
    )?.[0] ?? "";
    assert.match(requests, /No trace events of this run/);
    assert.doesNotMatch(requests, /report above is complete|as they go/);
    assert.match(
      requests,
      /no report of it was kept: what its checkpoint recorded \(above\) is all there is/,
    );
  });
});
