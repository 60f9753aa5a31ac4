/**
 * `trace quickstart` (`deno task start`) tells the truth about what it ran:
 * the demo lived in memory inside the command, so its FAIL run has nothing
 * left to clean up, and its unregistered config targets show up as such in
 * every listing that knows their runs.
 */

import assert from "node:assert/strict";
import { createClient } from "@libsql/client";
import { main } from "../cli.ts";
import { captureIo, withTempDir } from "./_helpers.ts";

async function trace(args: string[]) {
  const io = captureIo();
  const code = await main(args, io);
  return { code, out: io.stdout(), err: io.stderr() };
}

Deno.test("trace quickstart says the demo's records are gone with it and prints commands the README's reader can run", async () => {
  await withTempDir(async (dir) => {
    const data = ["--data-dir", dir];
    const quick = await trace(["quickstart", ...data]);
    assert.equal(quick.code, 0, quick.err);
    // No advice that is refused: the runs' target was never registered.
    assert.doesNotMatch(quick.out, /external-cleanup/);
    assert.match(
      quick.out,
      /\n {2}The demo kept these records in memory inside this command and has stopped: nothing is left to remove\n/,
    );
    assert.match(quick.out, /kept its data in memory, so it is gone/);
    // The commands, spelled the way the README runs them from source.
    const npx = `npx -y deno@${Deno.version.deno} run -A cli.ts`;
    assert.ok(
      quick.out.includes(`\n  ${npx} demo --defect stale-cache\n`),
      quick.out,
    );
    assert.ok(
      quick.out.includes(
        `\n  ${npx} external-run --config fixtures/staging-adapter.json --data-dir ${dir}\n`,
      ),
      quick.out,
    );
    assert.doesNotMatch(quick.out, /(^|[^.\w])deno run -A cli\.ts/m);
    assert.ok(
      quick.out.includes(
        `and follow the commands the FAIL prints, with ${npx} where they say trace.`,
      ),
      quick.out,
    );

    // Its runs are listed, and so are their targets, as unregistered.
    const runs = JSON.parse(
      (await trace(["external-runs", "--json", ...data])).out,
    ).runs;
    assert.equal(runs.length, 2);
    for (const run of runs) assert.equal(run.target_registered, false);
    const text = await trace(["external-runs", ...data]);
    assert.equal(text.out.match(/ \(unregistered\) /g)?.length, 2, text.out);
    const targets = JSON.parse(
      (await trace(["external-targets", "--all", "--json", ...data])).out,
    );
    assert.deepEqual(targets.targets, []);
    assert.deepEqual(
      targets.unregistered.map((t: { target_id: string }) => t.target_id)
        .sort(),
      runs.map((r: { target_id: string }) => r.target_id).sort(),
    );
    for (const target of targets.unregistered) assert.equal(target.runs, 1);
    const listed = await trace(["external-targets", "--all", ...data]);
    assert.match(listed.out, /\nUnregistered: known only from their runs/);
    const plain = await trace(["external-targets", ...data]);
    assert.match(
      plain.out,
      /\(and 2 unregistered target\(s\) .*--all lists them\)\n$/,
    );

    // Asked anyway, cleanup says why it cannot, without sending anyone to a dead port.
    const fail = runs.find((r: { verdict: string }) => r.verdict === "FAIL");
    const cleanup = await trace(["external-cleanup", fail.run_id, ...data]);
    assert.equal(cleanup.code, 2);
    assert.match(
      cleanup.err,
      /was never registered \(a config run such as trace quickstart's/,
    );
  });
});

Deno.test("trace quickstart refuses a broken ledger before it runs anything", async () => {
  await withTempDir(async (dir) => {
    const data = ["--data-dir", dir];
    assert.equal((await trace(["quickstart", ...data])).code, 0);
    const raw = createClient({ url: `file:${dir}/trace.db` });
    try {
      await raw.execute("DROP TRIGGER ledger_entries_no_update");
      await raw.execute(
        "UPDATE ledger_entries SET payload = replace(payload, 'FAIL', 'PASS') WHERE seq = 2",
      );
    } finally {
      raw.close();
    }
    const again = await trace(["quickstart", ...data]);
    assert.equal(again.code, 2);
    assert.equal(again.out, "");
    assert.match(
      again.err,
      /The ledger is broken at entry \d+: run trace ledger verify/,
    );
    assert.doesNotMatch(again.err, /demo staging app/);
  });
});
