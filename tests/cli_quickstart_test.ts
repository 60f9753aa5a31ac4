/**
 * `trace quickstart` (`deno task start`) tells the truth about what it ran:
 * the demo lived in memory inside the command, so its FAIL run has nothing
 * left to clean up, and its unregistered config targets show up as such in
 * every listing that knows their runs.
 */

import assert from "node:assert/strict";
import { createClient } from "@libsql/client";
import { main } from "../cli.ts";
import { projectPath } from "../cli/quickstart.ts";
import { captureIo, withTempDir } from "./_helpers.ts";
import type { CliIo } from "../cli/_io.ts";

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

    // Its record does not send anyone to a cleanup that is refused either.
    const fail = runs.find((r: { verdict: string }) => r.verdict === "FAIL");
    const shown = await trace(["external-show", fail.run_id, ...data]);
    assert.equal(shown.code, 1, shown.err);
    assert.ok(
      !shown.out.includes(`trace external-cleanup ${fail.run_id}`),
      shown.out,
    );
    assert.match(shown.out, /nothing is left to remove/);

    // Asked anyway, cleanup says why it cannot, without sending anyone to a dead port.
    const cleanup = await trace(["external-cleanup", fail.run_id, ...data]);
    assert.equal(cleanup.code, 2);
    assert.match(
      cleanup.err,
      /was never registered \(a config run such as trace quickstart's/,
    );
  });
});

Deno.test("trace quickstart with a defect that gives no FAIL words its summary by the verdict it gave", async () => {
  await withTempDir(async (dir) => {
    const quick = await trace([
      "quickstart",
      "--defect",
      "lost-control",
      "--data-dir",
      dir,
    ]);
    assert.equal(quick.code, 0, quick.err);
    assert.match(quick.out, /\n {2}lost-control +INCONCLUSIVE +expected /);
    // No FAIL happened: nothing to follow from one, and nothing was caught as one.
    assert.doesNotMatch(quick.out, /FAIL prints|caught the defect/);
    assert.match(
      quick.out,
      /\nBoth verdicts are the expected ones: Trace passed the healthy app and gave the defect its documented INCONCLUSIVE: the unrelated control namespace loses its records/,
    );
    assert.match(
      quick.out,
      /\nand read its INCONCLUSIVE: only a FAIL can be saved and replayed; follow any command it prints, with npx .* where it says trace\.\n$/,
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

/**
 * `trace quickstart` as a person at a terminal runs it: the io's
 * `interrupted` signal is what the first Ctrl-C aborts, here once stderr
 * shows `when`; the exit notes a second Ctrl-C would print are kept.
 */
async function interruptedQuickstart(args: string[], when: RegExp) {
  const ctrlC = new AbortController();
  const captured = captureIo();
  let err = "";
  const notes: (string | null)[] = [];
  const io: CliIo = {
    ...captured,
    err(text) {
      err += text;
      // A signal arrives from the event loop, not inside the write.
      if (when.test(err)) setTimeout(() => ctrlC.abort(), 0);
    },
    interrupted: ctrlC.signal,
    setExitNote: (note) => void notes.push(note),
  };
  const code = await main(["quickstart", ...args], io);
  return { code, out: captured.stdout(), err, notes };
}

Deno.test("trace quickstart stops at the first Ctrl-C as external-run does: the run cleans up and is recorded interrupted, the next one does not start", async () => {
  await withTempDir(async (dir) => {
    const data = ["--data-dir", dir];
    const quick = await interruptedQuickstart(data, /progress: sample #1 /);
    assert.equal(quick.code, 2, quick.err);
    assert.match(
      quick.err,
      /progress: interrupted during window: no verdict without the final sample; stopping within \d+ s, cleanup included \(requests end by \d+ s,/,
    );
    assert.match(quick.err, /what is left after the interrupt/);
    assert.doesNotMatch(quick.err, /2\/2 {2}demo staging app/);
    const runId = quick.out.match(
      /^INCONCLUSIVE {2}(run-\S+) {2}\(interrupted\)$/m,
    )
      ?.[1];
    assert.ok(runId, quick.out);
    assert.match(quick.out, /\n {2}stale-cache +not run\n/);
    assert.ok(
      quick.out.includes(
        `\nInterrupted: the healthy run ${runId} stopped early: INCONCLUSIVE (interrupted), cleanup complete; the stale-cache run did not start.\n`,
      ),
      quick.out,
    );
    assert.match(quick.out, /nothing is left to clean up\./);
    assert.ok(
      quick.out.includes(
        `\nFor both verdicts, run it again: npx -y deno@${Deno.version.deno} run -A cli.ts quickstart --data-dir ${dir}\n`,
      ),
      quick.out,
    );
    assert.doesNotMatch(quick.out, /external-cleanup|report this as a bug/);
    // A second Ctrl-C during the run would have said where the records went, not sent anyone to a cleanup that is refused.
    const note = quick.notes.find((n) => n !== null);
    assert.ok(
      note?.startsWith(`run ${runId} stopped before its cleanup finished;`),
    );
    assert.match(note!, /nothing is left to remove/);
    assert.doesNotMatch(note!, /external-cleanup/);
    assert.equal(quick.notes.at(-1), null);

    // The run is in the ledger with its report, not a checkpoint whose cleanup is unknown.
    const runs = JSON.parse(
      (await trace(["external-runs", "--json", ...data])).out,
    ).runs;
    assert.equal(runs.length, 1);
    assert.equal(runs[0].run_id, runId);
    assert.equal(runs[0].state, "interrupted");
    assert.equal(runs[0].verdict, "INCONCLUSIVE");
    assert.equal(runs[0].kept_in, "ledger");
    assert.equal(runs[0].cleanup, "complete");
    const shown = await trace(["external-show", runId!, ...data]);
    assert.equal(shown.code, 2, shown.err);
    assert.doesNotMatch(shown.out, /external-cleanup/);
  });
});

Deno.test("trace quickstart interrupted repeats the --defect it was given in the command that runs it again", async (t) => {
  const cases: [string, string][] = [
    ["vector-resurrect", "For both verdicts"],
    ["none", "For its verdict"],
  ];
  for (const [defect, what] of cases) {
    await t.step(defect, async () => {
      await withTempDir(async (dir) => {
        const quick = await interruptedQuickstart(
          ["--defect", defect, "--data-dir", dir],
          /progress: sample #1 /,
        );
        assert.equal(quick.code, 2, quick.err);
        assert.ok(
          quick.out.includes(
            `\n${what}, run it again: npx -y deno@${Deno.version.deno} run -A cli.ts quickstart --defect ${defect} --data-dir ${dir}\n`,
          ),
          quick.out,
        );
      });
    });
  }
});

Deno.test("trace quickstart interrupted in the defect's run: --json says so, and the run's record gives advice that works", async () => {
  await withTempDir(async (dir) => {
    const data = ["--data-dir", dir];
    const quick = await interruptedQuickstart(
      [...data, "--json"],
      /2\/2 {2}demo staging app[^]*progress: sample #1 /,
    );
    assert.equal(quick.code, 2, quick.err);
    const answer = JSON.parse(quick.out);
    assert.equal(answer.as_expected, false);
    assert.equal(answer.interrupted, true);
    assert.deepEqual(answer.not_run, []);
    assert.deepEqual(
      answer.runs.map((r: { demo: string; verdict: string }) => [
        r.demo,
        r.verdict,
      ]),
      [["healthy", "PASS"], ["stale-cache", "INCONCLUSIVE"]],
    );
    // The stale cache keeps serving the marker: the bounded cleanup cannot finish.
    const cut = answer.runs[1];
    assert.equal(cut.cleanup_complete, false);

    // Its record says what became of the records instead of a refused command.
    const shown = await trace(["external-show", cut.run_id, ...data]);
    assert.equal(shown.code, 2, shown.err);
    assert.match(shown.out, /\(interrupted\)/);
    assert.ok(
      !shown.out.includes(`trace external-cleanup ${cut.run_id}`),
      shown.out,
    );
    assert.match(
      shown.out,
      /\n {2}Its target was never registered, so trace external-cleanup cannot remove what is left: see below\n/,
    );
    assert.match(
      shown.out,
      /its cleanup was incomplete, and trace external-cleanup cannot remove them, as target cfg-\S+ was never registered .*in-process demo app, which kept the records in memory, so they ended with that command and nothing is left to remove/,
    );
    const view = JSON.parse(
      (await trace(["external-show", cut.run_id, "--json", ...data])).out,
    );
    assert.equal(view.target_registered, false);
    assert.equal(view.state, "interrupted");
    const cleanup = await trace(["external-cleanup", cut.run_id, ...data]);
    assert.equal(cleanup.code, 2);
    assert.match(cleanup.err, /was never registered/);
  });
});

Deno.test("quickstart names project files so a reader in another directory can run what it prints", () => {
  const root = new URL("..", import.meta.url).pathname.replace(/\/$/, "");
  const before = Deno.env.get("INIT_CWD");
  try {
    Deno.env.set("INIT_CWD", root);
    assert.equal(projectPath("cli.ts"), "cli.ts");
    // `deno task start` run from docs/: the task runs in the root, the reader is in docs/.
    Deno.env.set("INIT_CWD", `${root}/docs`);
    assert.equal(projectPath("cli.ts"), `${root}/cli.ts`);
  } finally {
    if (before === undefined) Deno.env.delete("INIT_CWD");
    else Deno.env.set("INIT_CWD", before);
  }
});

Deno.test("trace quickstart --defect none runs the healthy app alone, as trace demo --defect none serves it", async () => {
  await withTempDir(async (dir) => {
    const quick = await trace([
      "quickstart",
      "--defect",
      "none",
      "--json",
      "--data-dir",
      dir,
    ]);
    assert.equal(quick.code, 0, quick.err);
    const summary = JSON.parse(quick.out);
    assert.equal(summary.as_expected, true);
    assert.deepEqual(
      summary.runs.map((r: { demo: string; verdict: string }) => [
        r.demo,
        r.verdict,
      ]),
      [["healthy", "PASS"]],
    );
    assert.match(quick.err, /\n1\/1 {2}demo staging app \(healthy\)\n/);
    const text = await trace([
      "quickstart",
      "--defect",
      "none",
      "--data-dir",
      dir,
    ]);
    assert.equal(text.code, 0, text.err);
    assert.match(
      text.out,
      /\nThe verdict is the expected one: Trace passed the healthy app\.\n/,
    );
    assert.match(text.out, /\n {2}.* quickstart --data-dir \S+\n$/);
    const unknown = await trace(["quickstart", "--defect", "nope"]);
    assert.equal(unknown.code, 2);
    assert.match(unknown.err, /valid defects: none, stale-cache, /);
  });
});
