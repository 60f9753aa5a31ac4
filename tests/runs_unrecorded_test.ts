/**
 * What readers and the gate say when the ledger lacks what ran: an entry
 * removed from its middle, a target never run, a completed run whose
 * report is lost, and a report kept on disk, as written or changed.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { runDownloads } from "../routes/ui/links.ts";
import { renderRunDocument } from "../routes/ui/run_html.tsx";
import { loadRunDetail } from "../routes/ui/run_view.ts";
import { migrate, openDb, type TraceDb } from "../lib/db.ts";
import { appendEntry } from "../lib/ledger/chain.ts";
import { saveRegression } from "../lib/ledger/regressions.ts";
import { registerTarget } from "../lib/ledger/targets.ts";
import { verifyLedger } from "../lib/ledger/verify.ts";
import { ALL_MIGRATIONS } from "../lib/migrations.ts";
import { withDb } from "./_helpers.ts";
import { withRawClient } from "./_tamper.ts";
import {
  CONFIG,
  fakeReplay,
  fakeRun,
  trace,
  withStagingA,
} from "./_unrecorded.ts";

Deno.test({
  name:
    "ledger verify names a removed entry once a later append has chained over the gap it left",
  fn: async () => {
    await withDb(async (db) => {
      await migrate(db, ALL_MIGRATIONS);
      for (const n of [1, 2, 3]) {
        await appendEntry(db, {
          kind: "run",
          entityId: `run-${n}`,
          targetId: "staging-a",
          payload: { run_id: `run-${n}`, verdict: "PASS", findings: [] },
        });
      }
      await withRawClient(db, async (client) => {
        await client.execute("DROP TRIGGER ledger_entries_no_delete");
        await client.execute("DROP TRIGGER ledger_head_no_delete");
        await client.execute("DELETE FROM ledger_entries WHERE seq = 3");
        await client.execute("DELETE FROM ledger_head WHERE entry_seq = 3");
      });
      await appendEntry(db, {
        kind: "run",
        entityId: "run-4",
        targetId: "staging-a",
        payload: { run_id: "run-4", verdict: "PASS", findings: [] },
      });
      const result = await verifyLedger(db);
      assert.equal(result.ok, false);
      assert.equal(result.broken?.seq, 4);
      assert.match(result.broken!.problem, /entry 3 before it is missing/);
    });
  },
});

Deno.test({
  name:
    "trace external-gate --target exits 2 for a target without a single run",
  fn: async () => {
    await withDb(async (db, dir) => {
      await withStagingA(db);
      await registerTarget(db, {
        targetId: "staging-new",
        config: { ...CONFIG, base_url: "http://127.0.0.1:9" },
        source: "registered",
      });
      await fakeRun(db, dir);
      const gate = await trace([
        "external-gate",
        "--target",
        "staging-new",
        "--data-dir",
        dir,
      ]);
      assert.equal(gate.code, 2, gate.out);
      assert.match(gate.err, /Target staging-new has no run in the ledger/);
      const other = await trace([
        "external-gate",
        "--target",
        "staging-a",
        "--data-dir",
        dir,
      ]);
      assert.equal(other.code, 0, other.err);
    });
  },
});

Deno.test({
  name:
    "a run whose checkpoint says completed but which the ledger lacks is listed and not called interrupted",
  fn: async () => {
    await withDb(async (db, dir) => {
      await withStagingA(db);
      const fail = await fakeRun(db, dir, { staleCache: true });
      const { regression } = await saveRegression(db, fail.run_id);
      await fakeReplay(db, dir, regression.regression_id);
      const failedReplay = (await fakeReplay(
        db,
        dir,
        regression.regression_id,
        { staleCache: true },
      )).run_id;
      // The failing replay and its run entry removed with their head records.
      await withRawClient(db, async (client) => {
        await client.execute("DROP TRIGGER ledger_entries_no_delete");
        await client.execute("DROP TRIGGER ledger_head_no_delete");
        const last = await client.execute(
          "SELECT MIN(seq) AS seq FROM ledger_entries WHERE entity_id = ?",
          [failedReplay],
        );
        const from = Number(last.rows[0]!.seq);
        await client.execute("DELETE FROM ledger_entries WHERE seq >= ?", [
          from,
        ]);
        await client.execute("DELETE FROM ledger_head WHERE entry_seq >= ?", [
          from,
        ]);
      });
      const checkpoint = JSON.parse(
        await Deno.readTextFile(join(dir, "external", `${failedReplay}.json`)),
      );
      assert.equal(checkpoint.state, "completed");
      const runs = await trace(["external-runs", "--json", "--data-dir", dir]);
      const listed = JSON.parse(runs.out).runs.map((r: { run_id: string }) =>
        r.run_id
      );
      assert.ok(listed.includes(failedReplay), runs.out);
      const show = await trace([
        "external-show",
        failedReplay,
        "--json",
        "--data-dir",
        dir,
      ]);
      const view = JSON.parse(show.out);
      assert.equal(view.state, "completed", show.out);
      assert.equal(view.verdict, "FAIL");
      assert.equal(view.kept_in, "checkpoint");
      assert.match(view.note, /neither the ledger nor a kept report/);
      assert.equal(show.code, 1);
      const gate = await trace(["external-gate", "--data-dir", dir]);
      assert.equal(gate.code, 2, gate.out);
      assert.match(
        gate.err,
        new RegExp(`The ledger lacks completed run ${failedReplay}`),
      );
    });
  },
});

/** A run recorded in `dir`'s ledger, then its checkpoint and report moved to `other` as if the ledger had refused it. */
async function keptElsewhere(
  db: TraceDb,
  dir: string,
  other: string,
  behaviour: { staleCache?: boolean },
) {
  const report = await fakeRun(db, dir, behaviour);
  await Deno.mkdir(join(other, "external"), { recursive: true });
  await Deno.copyFile(
    join(dir, "external", `${report.run_id}.json`),
    join(other, "external", `${report.run_id}.json`),
  );
  const keptPath = join(other, "external", `${report.run_id}.report.json`);
  await Deno.writeTextFile(keptPath, JSON.stringify(report));
  return { report, keptPath };
}

Deno.test("a report kept on disk is shown as not in the ledger, never exits 0, and a changed one is refused", async () => {
  await withDb(async (db, dir) => {
    await withStagingA(db);
    const other = join(dir, "other");
    await Deno.mkdir(other);
    const otherLedger = await openDb({ dataDir: other });
    try {
      await migrate(otherLedger, ALL_MIGRATIONS);
    } finally {
      otherLedger.close();
    }
    const pass = await keptElsewhere(db, dir, other, {});
    const fail = await keptElsewhere(db, dir, other, { staleCache: true });
    const data = ["--data-dir", other];
    const otherDb = await trace(["external-runs", "--json", ...data]);
    const listed = JSON.parse(otherDb.out).runs as {
      run_id: string;
      kept_in: string;
    }[];
    assert.deepEqual(
      listed.map((r) => r.kept_in).sort(),
      ["file", "file"],
      otherDb.out,
    );
    const shownPass = await trace([
      "external-show",
      pass.report.run_id,
      "--json",
      ...data,
    ]);
    assert.equal(JSON.parse(shownPass.out).verdict, "PASS");
    assert.equal(JSON.parse(shownPass.out).kept_in, "file");
    assert.match(
      JSON.parse(shownPass.out).note,
      /this run is not in the ledger/,
    );
    assert.equal(shownPass.code, 2, "a PASS only a file vouches for");
    const shownFail = await trace([
      "external-show",
      fail.report.run_id,
      ...data,
    ]);
    assert.equal(shownFail.code, 1);
    const pageDb = await openDb({ dataDir: other });
    try {
      const detail = await loadRunDetail(
        { db: pageDb, dataDir: other, jobs: null },
        pass.report.run_id,
      );
      assert.equal(detail.kept_in, "file");
      const html = await renderRunDocument(detail);
      assert.match(
        html,
        /role="note">This run is not in the ledger: its report is kept at /,
      );
      assert.match(
        runDownloads(detail.run_id, detail.kept_in)[0]!.hint,
        /kept on disk, not a ledger record/,
      );
    } finally {
      pageDb.close();
    }
    // The FAIL's markers replaced in the file: a later cleanup would query those.
    assert.ok(fail.report.markers, "the run kept its markers");
    await Deno.writeTextFile(
      fail.keptPath,
      JSON.stringify({
        ...fail.report,
        markers: { ...fail.report.markers, test: "trace_canary_edited" },
      }),
    );
    const moved = await trace(["external-show", fail.report.run_id, ...data]);
    assert.equal(moved.code, 2);
    assert.match(
      moved.err,
      /cannot be trusted: its markers differ from its checkpoint \(changed after the run\)/,
    );
    // The FAIL's verdict changed to PASS in the file: its checkpoint says FAIL.
    await Deno.writeTextFile(
      fail.keptPath,
      JSON.stringify({ ...fail.report, verdict: "PASS" }),
    );
    const forged = await trace(["external-show", fail.report.run_id, ...data]);
    assert.equal(forged.code, 2);
    assert.equal(forged.out, "");
    assert.match(
      forged.err,
      /cannot be trusted: it says PASS, its checkpoint says FAIL \(changed after the run\)/,
    );
    // The checkpoint changed to PASS as well: the report's own evidence still gives FAIL.
    const checkpointPath = join(
      other,
      "external",
      `${fail.report.run_id}.json`,
    );
    const checkpoint = JSON.parse(await Deno.readTextFile(checkpointPath));
    await Deno.writeTextFile(
      checkpointPath,
      JSON.stringify({ ...checkpoint, verdict: "PASS" }),
    );
    const bothEdited = await trace([
      "external-show",
      fail.report.run_id,
      ...data,
    ]);
    assert.equal(bothEdited.code, 2);
    assert.match(bothEdited.err, /it says PASS, its evidence gives FAIL/);
    // Findings dropped to match a PASS: the evidence still gives FAIL.
    await Deno.writeTextFile(
      fail.keptPath,
      JSON.stringify({
        ...fail.report,
        verdict: "PASS",
        findings: pass.report.findings,
      }),
    );
    const rewritten = await trace([
      "external-show",
      fail.report.run_id,
      ...data,
    ]);
    assert.equal(rewritten.code, 2);
    assert.match(rewritten.err, /its evidence gives FAIL/);
  });
});
