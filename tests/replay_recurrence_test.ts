/**
 * A replay that did not pass says whether the failure its regression was
 * saved for came back, or the replay failed on something else, or could not
 * tell (INCONCLUSIVE): a new failure is not reported as the old bug.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { startDemoServer } from "../cli/demo.ts";
import { externalRegister } from "../cli/targets.ts";
import { externalRun } from "../cli/external.ts";
import { externalReplay, externalSave } from "../cli/regressions.ts";
import type { DemoDefect } from "../lib/demo/defects.ts";
import {
  recurrenceOutcome,
  recurrenceSentence,
  recurrenceWords,
  replayRecurrence,
} from "../lib/ledger/recurrence.ts";
import type { Finding, RunReport, Verdict } from "../lib/runner/report.ts";
import { captureIo, withTempDir } from "./_helpers.ts";
import { closedPort } from "./_tcp_servers.ts";

/** The parts of a report the comparison reads: its verdict and findings. */
function reportWith(verdict: Verdict, failed: string[]): RunReport {
  const findings: Finding[] = failed.map((name) => {
    const [code, subject] = name.split(":") as [string, string];
    return {
      severity: "fail",
      code,
      subject,
      message: name,
      sample_indexes: [],
    };
  });
  return { verdict, findings } as unknown as RunReport;
}

const SAVED = {
  assertions: [
    { code: "marker_retrievable", subject: "retrieval", families: [] },
    { code: "residual_store", subject: "cache_records", families: [] },
  ],
};

Deno.test("replayRecurrence() tells a recurred failure from another one and from an INCONCLUSIVE replay", () => {
  assert.equal(replayRecurrence(SAVED, reportWith("PASS", [])), null);
  assert.deepEqual(
    replayRecurrence(SAVED, reportWith("INCONCLUSIVE", [])),
    { kind: "inconclusive" },
  );
  const back = replayRecurrence(
    SAVED,
    reportWith("FAIL", ["residual_store:cache_records"]),
  );
  assert.equal(back?.kind, "recurred");
  const other = replayRecurrence(
    SAVED,
    reportWith("FAIL", ["residual_store:vector_records"]),
  );
  assert.equal(other?.kind, "other_failure");
  assert.deepEqual(
    other?.kind === "other_failure" &&
      other.instead.map((a) => `${a.code}:${a.subject}`),
    ["residual_store:vector_records"],
  );
  const both = replayRecurrence(
    SAVED,
    reportWith("FAIL", [
      "marker_retrievable:retrieval",
      "residual_store:vector_records",
    ]),
  );
  assert.ok(both?.kind === "recurred");
  assert.deepEqual(both.recurred.map((a) => a.subject), ["retrieval"]);
  assert.deepEqual(both.also.map((a) => a.subject), ["vector_records"]);
});

Deno.test("recurrenceSentence() and recurrenceWords() name what came back, what failed besides, and what was saved", () => {
  const definition = { ...SAVED, regression_id: "reg-1" };
  const both = replayRecurrence(
    SAVED,
    reportWith("FAIL", [
      "marker_retrievable:retrieval",
      "residual_store:vector_records",
    ]),
  )!;
  assert.equal(
    recurrenceSentence(both, definition),
    "the failure that regression reg-1 was saved for came back: marker_retrievable:retrieval failed again, and residual_store:vector_records failed too",
  );
  assert.equal(
    recurrenceWords(both, SAVED),
    "the saved failure recurred (marker_retrievable:retrieval failed again), and residual_store:vector_records failed too",
  );
  assert.equal(recurrenceOutcome(both), "the saved failure came back");
  const unsure = replayRecurrence(SAVED, reportWith("INCONCLUSIVE", []))!;
  assert.equal(
    recurrenceSentence(unsure, definition),
    "INCONCLUSIVE: cannot say whether the failure that regression reg-1 was saved for (marker_retrievable:retrieval and residual_store:cache_records) came back",
  );
  assert.equal(
    recurrenceWords(unsure, SAVED),
    "it cannot tell whether the saved failure (marker_retrievable:retrieval and residual_store:cache_records) recurred",
  );
});

/**
 * The port every demo of this file listens on, free when the file starts
 * (a fixed one could be taken by another run): the regression pins the
 * target's base_url, so each restarted demo must come back on it.
 */
const PORT = closedPort();

async function withDemo<T>(
  defect: DemoDefect | null,
  fn: () => Promise<T>,
): Promise<T> {
  // A short delay, so that vector-resurrect's re-index lands inside the window.
  const demo = await startDemoServer({ defect, port: PORT, delayMs: 300 });
  try {
    return await fn();
  } finally {
    await demo.shutdown();
  }
}

async function call(
  command: typeof externalRun,
  args: string[],
): Promise<{ code: number; out: string; err: string }> {
  const io = captureIo();
  const code = await command(args, io);
  return { code, out: io.stdout(), err: io.stderr() };
}

Deno.test("external-replay of an enforced regression says whether the saved failure recurred, another one appeared, or the replay could not tell", async () => {
  await withTempDir(async (dir) => {
    const data = ["--data-dir", join(dir, "data")];
    const config = join(dir, "staging.json");
    await Deno.writeTextFile(
      config,
      JSON.stringify({
        base_url: `http://127.0.0.1:${PORT}`,
        environment: "staging",
        allow_synthetic_writes: true,
        document_count: 2,
        deletion_window_seconds: 1,
        sample_interval_seconds: 0.25,
      }),
    );
    const registered = await call(externalRegister, [
      "--target",
      "demo",
      "--config",
      config,
      ...data,
    ]);
    assert.equal(registered.code, 0, registered.err);
    const runId = await withDemo("stale-cache", async () => {
      const run = await call(externalRun, [
        "--target",
        "demo",
        "--json",
        ...data,
      ]);
      assert.equal(run.code, 1, run.err);
      return JSON.parse(run.out).run_id as string;
    });
    const saved = await call(externalSave, [runId, "--json", ...data]);
    assert.equal(saved.code, 0, saved.err);
    const regressionId = JSON.parse(saved.out).regression.regression_id;

    const stillPending = await withDemo(
      "vector-resurrect",
      () => call(externalReplay, [regressionId, ...data]),
    );
    assert.equal(stillPending.code, 1, stillPending.err);
    assert.equal(
      stillPending.out.trimEnd().split("\n").at(-1),
      `Regression ${regressionId}: pending (a PASS replay will enforce it), and this replay did not pass (FAIL): the saved failure (marker_retrievable:retrieval and residual_store:cache_records) did not recur; it failed on something else: residual_store:vector_records`,
    );

    const fixed = await withDemo(
      null,
      () => call(externalReplay, [regressionId, ...data]),
    );
    assert.equal(fixed.code, 0, fixed.err);
    assert.match(
      fixed.out,
      new RegExp(`\nRegression ${regressionId}: enforced \\(from now on`),
    );

    const other = await withDemo(
      "vector-resurrect",
      () => call(externalReplay, [regressionId, ...data]),
    );
    assert.equal(other.code, 1, other.err);
    const line = other.out.trimEnd().split("\n").at(-1)!;
    assert.equal(
      line,
      `Regression ${regressionId}: enforced, and this replay did not pass (FAIL): the saved failure (marker_retrievable:retrieval and residual_store:cache_records) did not recur; it failed on something else: residual_store:vector_records; the gate fails until a replay passes`,
    );
    assert.doesNotMatch(other.out, /the bug is back/);

    const unsure = await withDemo(
      "lost-control",
      () => call(externalReplay, [regressionId, ...data]),
    );
    assert.equal(unsure.code, 2, unsure.err);
    assert.equal(
      unsure.out.trimEnd().split("\n").at(-1),
      `Regression ${regressionId}: enforced, and this replay did not pass (INCONCLUSIVE): it cannot tell whether the saved failure (marker_retrievable:retrieval and residual_store:cache_records) recurred: read its findings above and replay again; the gate fails until a replay passes`,
    );

    const back = await withDemo(
      "stale-cache",
      () => call(externalReplay, [regressionId, ...data]),
    );
    assert.equal(back.code, 1, back.err);
    assert.match(
      back.out.trimEnd().split("\n").at(-1)!,
      /: enforced, and this replay did not pass \(FAIL\): the bug is back: the saved failure recurred \(marker_retrievable:retrieval and residual_store:cache_records failed again\)$/,
    );
  });
});
