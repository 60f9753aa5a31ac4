/**
 * Known gaps, each reproduced and ignored until fixed: remove `ignore` when
 * the behaviour changes, and the test must then pass.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { type Client, createClient } from "@libsql/client";
import { main } from "../cli.ts";
import { appendAudit, type AuditRecord, verifyAudit } from "../lib/auth/mod.ts";
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

const RECORD: AuditRecord = {
  actor: { name: "admin-1", role: "admin", via: "session" },
  action: "content.reveal",
  scope: {},
  targets: { agent_id: "support-bot", root_trace_id: "root-1" },
  reason: "SUP-1",
  outcome: "succeeded",
};

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
    "audit verify names a removed entry once a later append has chained over the gap it left",
  ignore: true, // the walk follows prev_chain only; a gap in seq is not checked
  fn: async () => {
    await withDb(async (db) => {
      await migrate(db, ALL_MIGRATIONS);
      for (let n = 0; n < 3; n++) await appendAudit(db, RECORD);
      await raw(db, async (client) => {
        await client.execute("DROP TRIGGER auth_audit_no_delete");
        await client.execute("DROP TRIGGER auth_audit_head_no_delete");
        await client.execute("DELETE FROM auth_audit WHERE seq = 3");
        await client.execute("DELETE FROM auth_audit_head WHERE entry_seq = 3");
      });
      const next = await appendAudit(db, RECORD);
      assert.equal(next.seq, 4); // AUTOINCREMENT never reuses 3
      const result = await verifyAudit(db);
      assert.equal(result.ok, false);
      assert.equal(result.broken?.seq, 3);
    });
  },
});

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
    "the audit trail refuses INSERT OR REPLACE over an entry, as the ledger does, without any trigger dropped",
  ignore: true, // auth_audit has no BEFORE INSERT append-only trigger
  fn: async () => {
    await withDb(async (db) => {
      await migrate(db, ALL_MIGRATIONS);
      await appendAudit(db, RECORD);
      await appendAudit(db, RECORD);
      await raw(db, async (client) => {
        await assert.rejects(
          client.execute(
            `INSERT OR REPLACE INTO auth_audit
               SELECT seq, entry_id, created_at, operator, action, outcome,
                      replace(payload, 'SUP-1', 'SUP-2'), payload_digest,
                      prev_chain, chain_digest
               FROM auth_audit WHERE seq = 1`,
          ),
          /append-only/,
        );
      });
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

Deno.test({
  name:
    "the audit trail's subject key cannot be deleted beside it (audit list --subject would then find nothing)",
  ignore: true, // auth_keys has a no-update trigger only
  fn: async () => {
    await withDb(async (db) => {
      await migrate(db, ALL_MIGRATIONS);
      await appendAudit(db, RECORD);
      await raw(db, async (client) => {
        const keys = await client.execute(
          "SELECT COUNT(*) AS n FROM auth_keys",
        );
        assert.ok(Number(keys.rows[0]!.n) > 0);
        await assert.rejects(client.execute("DELETE FROM auth_keys"));
      });
    });
  },
});
