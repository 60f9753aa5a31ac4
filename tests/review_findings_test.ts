/**
 * Known gaps of the ledger and the run readers, each reproduced and ignored until fixed: remove `ignore` when
 * the behaviour changes, and the test must then pass.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { type Client, createClient } from "@libsql/client";
import { main } from "../cli.ts";
import { migrate, type TraceDb } from "../lib/db.ts";
import { appendEntry } from "../lib/ledger/chain.ts";
import { saveRegression } from "../lib/ledger/regressions.ts";
import { registerTarget } from "../lib/ledger/targets.ts";
import { verifyLedger } from "../lib/ledger/verify.ts";
import { ALL_MIGRATIONS } from "../lib/migrations.ts";
import { runExternal } from "../lib/runs/external_run.ts";
import { replayRegression } from "../lib/runs/replay.ts";
import { FakeTarget, VirtualClock } from "./_fake_target.ts";
import { captureIo, stagingConfig, withDb } from "./_helpers.ts";

const CONFIG = stagingConfig({ document_count: 2 });

/** Opens the file with a plain client, as an outside tool would. */
async function raw(db: TraceDb, fn: (client: Client) => Promise<void>) {
  const client = createClient({ url: db.url });
  try {
    await fn(client);
  } finally {
    client.close();
  }
}

async function trace(args: string[]) {
  const io = captureIo();
  const code = await main(args, io);
  return { code, out: io.stdout(), err: io.stderr() };
}

Deno.test({
  name:
    "ledger verify names a removed entry once a later append has chained over the gap it left",
  ignore: true, // the walk follows prev_chain only; a gap in seq is not checked
  fn: async () => {
    await withDb(async (db) => {
      await migrate(db, ALL_MIGRATIONS);
      for (const n of [1, 2, 3]) {
        await appendEntry(db, {
          kind: "run",
          entityId: `run-${n}`,
          targetId: "staging-a",
          payload: { run_id: `run-${n}`, verdict: "PASS" },
        });
      }
      await raw(db, async (client) => {
        await client.execute("DROP TRIGGER ledger_entries_no_delete");
        await client.execute("DROP TRIGGER ledger_head_no_delete");
        await client.execute("DELETE FROM ledger_entries WHERE seq = 3");
        await client.execute("DELETE FROM ledger_head WHERE entry_seq = 3");
      });
      await appendEntry(db, {
        kind: "run",
        entityId: "run-4",
        targetId: "staging-a",
        payload: { run_id: "run-4", verdict: "PASS" },
      });
      const result = await verifyLedger(db);
      assert.equal(result.ok, false);
      assert.equal(result.broken?.seq, 3);
    });
  },
});

Deno.test({
  name:
    "trace external-gate --target exits 2 for a target without a single run",
  ignore: true, // the no-runs check looks at the whole ledger, not the target
  fn: async () => {
    await withDb(async (db, dir) => {
      await migrate(db, ALL_MIGRATIONS);
      await registerTarget(db, {
        targetId: "staging-a",
        config: CONFIG,
        source: "registered",
      });
      await registerTarget(db, {
        targetId: "staging-new",
        config: { ...CONFIG, base_url: "http://127.0.0.1:9" },
        source: "registered",
      });
      const clock = new VirtualClock();
      await runExternal(CONFIG, {
        db,
        dataDir: dir,
        target: {
          id: "staging-a",
          base_url: CONFIG.base_url,
          source: "registered",
        },
        transport: new FakeTarget(clock, {}),
        clock,
      });
      const gate = await trace([
        "external-gate",
        "--target",
        "staging-new",
        "--data-dir",
        dir,
      ]);
      assert.equal(gate.code, 2, gate.out);
    });
  },
});

Deno.test({
  name:
    "a run whose checkpoint says completed but which the ledger lacks is listed and not called interrupted",
  ignore: true, // readers fall back to the checkpoint and drop or mislabel it
  fn: async () => {
    await withDb(async (db, dir) => {
      await migrate(db, ALL_MIGRATIONS);
      await registerTarget(db, {
        targetId: "staging-a",
        config: CONFIG,
        source: "registered",
      });
      const target = {
        id: "staging-a",
        base_url: CONFIG.base_url,
        source: "registered",
      } as const;
      let clock = new VirtualClock();
      const { report: fail } = await runExternal(CONFIG, {
        db,
        dataDir: dir,
        target,
        transport: new FakeTarget(clock, { staleCache: true }),
        clock,
      });
      const { regression } = await saveRegression(db, fail.run_id);
      clock = new VirtualClock();
      await replayRegression(db, regression.regression_id, {
        dataDir: dir,
        transport: new FakeTarget(clock, {}),
        clock,
      });
      clock = new VirtualClock();
      const again = await replayRegression(db, regression.regression_id, {
        dataDir: dir,
        transport: new FakeTarget(clock, { staleCache: true }),
        clock,
      });
      const failedReplay = again.report.run_id;
      // The failing replay and its run entry removed with their head records.
      await raw(db, async (client) => {
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
      assert.notEqual(JSON.parse(show.out).state, "interrupted", show.out);
    });
  },
});
