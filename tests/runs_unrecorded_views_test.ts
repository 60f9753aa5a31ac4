/**
 * Runs the ledger lacks, as every reader sees them: the job view (MCP) and
 * `external-save` of a lost or kept run, a kept report that contradicts its
 * checkpoint, a changed kept report in the run list, the gate's answers for
 * a target without runs and for a checkpoint it cannot read, and the plan's
 * request budget against a real run.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { migrate, openDb, type TraceDb } from "../lib/db.ts";
import { ALL_MIGRATIONS } from "../lib/migrations.ts";
import { planRun } from "../lib/runner/plan.ts";
import { RunJobs, RunLock } from "../lib/runs/mod.ts";
import type { RunReport } from "../lib/runner/report.ts";
import { FakeTarget, VirtualClock } from "./_fake_target.ts";
import { withDb } from "./_helpers.ts";
import { CONFIG, fakeRun, trace, withStagingA } from "./_unrecorded.ts";

/**
 * A data dir `other` with a migrated, empty ledger, holding the checkpoints
 * of a PASS and a FAIL run recorded in `dir` (as if `other`'s ledger had
 * lost them), and, when `keep` is set, their reports kept on disk.
 */
async function withOther(
  db: TraceDb,
  dir: string,
  keep: boolean,
): Promise<
  { other: string; pass: RunReport; fail: RunReport; keptPath: string }
> {
  await withStagingA(db);
  const other = join(dir, "other");
  await Deno.mkdir(join(other, "external"), { recursive: true });
  const otherDb = await openDb({ dataDir: other });
  try {
    await migrate(otherDb, ALL_MIGRATIONS);
  } finally {
    otherDb.close();
  }
  const pass = await fakeRun(db, dir);
  const fail = await fakeRun(db, dir, { staleCache: true });
  for (const report of [pass, fail]) {
    await Deno.copyFile(
      join(dir, "external", `${report.run_id}.json`),
      join(other, "external", `${report.run_id}.json`),
    );
    if (keep) {
      await Deno.writeTextFile(
        join(other, "external", `${report.run_id}.report.json`),
        JSON.stringify(report),
      );
    }
  }
  const keptPath = join(other, "external", `${fail.run_id}.report.json`);
  return { other, pass, fail, keptPath };
}

Deno.test({
  name:
    "the job view (MCP trace.external_get) calls a completed run whose report is lost completed, as external-show does",
  fn: async () => {
    await withDb(async (db, dir) => {
      const { other, fail } = await withOther(db, dir, false);
      const otherDb = await openDb({ dataDir: other });
      const clock = new VirtualClock();
      const jobs = new RunJobs({
        db: otherDb,
        dataDir: other,
        clock,
        trace: false,
        lock: new RunLock(),
        transport: () => new FakeTarget(clock),
      });
      try {
        const view = await jobs.get(fail.run_id);
        assert.equal(view.state, "completed", JSON.stringify(view));
        assert.notEqual(view.verdict, "INCONCLUSIVE");
        assert.doesNotMatch(
          view.note ?? "",
          /the run stopped before a completed report/,
        );
      } finally {
        await jobs.close();
        otherDb.close();
      }
    });
  },
});

Deno.test({
  name:
    "external-save of a completed FAIL kept on disk does not say the run never completed",
  fn: async () => {
    await withDb(async (db, dir) => {
      const { other, fail } = await withOther(db, dir, true);
      const saved = await trace([
        "external-save",
        fail.run_id,
        "--data-dir",
        other,
      ]);
      assert.equal(saved.code, 2);
      assert.doesNotMatch(saved.err, /never completed/);
    });
  },
});

Deno.test({
  name:
    "a kept report whose verdict contradicts its own checkpoint is refused, not shown as the run's verdict",
  fn: async () => {
    await withDb(async (db, dir) => {
      const { other, pass, fail, keptPath } = await withOther(db, dir, true);
      // A consistent PASS written over the FAIL's kept report: its checkpoint still says FAIL.
      await Deno.writeTextFile(
        keptPath,
        JSON.stringify({ ...pass, run_id: fail.run_id }),
      );
      const shown = await trace([
        "external-show",
        fail.run_id,
        "--json",
        "--data-dir",
        other,
      ]);
      assert.equal(shown.code, 2);
      assert.equal(JSON.parse(shown.out).error.code, "refused");
      assert.match(shown.err, /checkpoint/);
    });
  },
});

Deno.test({
  name:
    "a changed kept report stays in external-runs, named as the kept report, not as an unreadable checkpoint",
  fn: async () => {
    await withDb(async (db, dir) => {
      const { other, fail, keptPath } = await withOther(db, dir, true);
      await Deno.writeTextFile(
        keptPath,
        JSON.stringify({ ...fail, verdict: "PASS" }),
      );
      const runs = await trace([
        "external-runs",
        "--json",
        "--data-dir",
        other,
      ]);
      const list = JSON.parse(runs.out) as {
        runs: { run_id: string }[];
        unreadable: string[];
      };
      const listed = list.runs.some((r) => r.run_id === fail.run_id);
      const namedAsReport = list.unreadable.some((p) =>
        p.endsWith(`${fail.run_id}.report.json`)
      );
      assert.ok(listed || namedAsReport, runs.out);
    });
  },
});

Deno.test({
  name:
    "external-gate --json for a target without runs answers a refusal code, not a storage error",
  fn: async () => {
    await withDb(async (db, dir) => {
      await withStagingA(db);
      const gate = await trace([
        "external-gate",
        "--json",
        "--target",
        "staging-a",
        "--data-dir",
        dir,
      ]);
      assert.equal(gate.code, 2);
      const answer = JSON.parse(gate.out || gate.err);
      assert.notEqual(answer.error.code, "storage", gate.out + gate.err);
    });
  },
});

Deno.test({
  name:
    "a run never sends more requests than its plan's budget says it may (at most)",
  fn: async () => {
    await withDb(async (db, dir) => {
      await withStagingA(db);
      const report = await fakeRun(db, dir, { staleCache: true });
      const plan = planRun(CONFIG, report.target);
      assert.ok(
        report.requests.total <= plan.request_budget.max_requests,
        `${report.requests.total} requests, budget ${plan.request_budget.max_requests}`,
      );
    });
  },
});

Deno.test({
  name:
    "external-gate does not pass in silence over a checkpoint it cannot read",
  fn: async () => {
    await withDb(async (db, dir) => {
      await withStagingA(db);
      await fakeRun(db, dir);
      await Deno.writeTextFile(
        join(dir, "external", "run-20261130T000000Z-aaaaaaaaaaaa.json"),
        '{"schema":"trace.checkpoint/1","state":"completed"',
      );
      const gate = await trace(["external-gate", "--data-dir", dir]);
      assert.ok(
        gate.code !== 0 || /cannot be read/.test(gate.err),
        `${gate.code}: ${gate.err}`,
      );
    });
  },
});
