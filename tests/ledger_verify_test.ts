import assert from "node:assert/strict";
import type { Client } from "@libsql/client";
import { withoutTriggers } from "./_tamper.ts";
import { ledgerVerify } from "../cli/ledger.ts";
import { migrate, type TraceDb } from "../lib/db.ts";
import { LedgerIntegrityError } from "../lib/errors.ts";
import { canonicalJson } from "../lib/canonical_json.ts";
import {
  appendEntry,
  chainDigest,
  GENESIS,
  payloadDigest,
} from "../lib/ledger/chain.ts";
import { readRun } from "../lib/ledger/runs.ts";
import { listRegressions, readRegression } from "../lib/ledger/regressions.ts";
import {
  latestReferenceRuns,
  listReferenceRuns,
  readReferenceRun,
} from "../lib/reference/history.ts";
import { LEDGER_MIGRATIONS } from "../lib/ledger/schema.ts";
import { runExternal } from "../lib/runs/external_run.ts";
import { FakeTarget, VirtualClock } from "./_fake_target.ts";
import { registerTarget } from "../lib/ledger/targets.ts";
import { verifyLedger } from "../lib/ledger/verify.ts";
import { ALL_MIGRATIONS } from "../lib/migrations.ts";
import { captureIo, stagingConfig, withDb } from "./_helpers.ts";

const CONFIG = stagingConfig();

/** A target registration (seq 1) and three runs (seq 2-4). */
async function seed(db: TraceDb): Promise<void> {
  await migrate(db, ALL_MIGRATIONS);
  await registerTarget(db, {
    targetId: "staging-a",
    config: CONFIG,
    source: "registered",
  });
  for (const n of [1, 2, 3]) {
    await appendEntry(db, {
      kind: "run",
      entityId: `run-${n}`,
      targetId: "staging-a",
      payload: {
        run_id: `run-${n}`,
        target: { id: "staging-a" },
        verdict: "PASS",
        findings: [],
      },
    });
  }
}

/** Opens the file with a plain client, as an outside tool would, without the triggers. */
function tamper(
  db: TraceDb,
  fn: (raw: Client) => Promise<void>,
): Promise<void> {
  return withoutTriggers(db, ["ledger_entries", "ledger_targets"], fn);
}

Deno.test("verifyLedger() accepts an intact ledger and reports its head", async () => {
  await withDb(async (db) => {
    await seed(db);
    const result = await verifyLedger(db);
    assert.equal(result.ok, true);
    assert.equal(result.entries, 4);
    assert.equal(result.targets, 1);
    assert.equal(result.head?.seq, 4);
    const io = captureIo();
    assert.equal(
      await ledgerVerify([
        "--data-dir",
        db.path!.replace(/\/trace\.db$/, ""),
      ], io),
      0,
    );
    assert.match(io.stdout(), /ledger intact: 4 entries, 1 target\(s\)/);
  });
});

Deno.test("the database itself refuses updates and deletes of entries", async () => {
  await withDb(async (db) => {
    await seed(db);
    await assert.rejects(
      () =>
        db.client.execute(
          "UPDATE ledger_entries SET payload = '{}' WHERE seq = 2",
        ),
      /append-only/,
    );
    await assert.rejects(
      () => db.client.execute("DELETE FROM ledger_entries WHERE seq = 4"),
      /append-only/,
    );
    await assert.rejects(
      () => db.client.execute("DELETE FROM ledger_head"),
      /append-only/,
    );
  });
});

Deno.test("verifyLedger() names an edited row", async () => {
  await withDb(async (db) => {
    await seed(db);
    await tamper(db, async (raw) => {
      await raw.execute(
        `UPDATE ledger_entries SET payload = replace(payload, '"PASS"', '"FAIL"') WHERE seq = 3`,
      );
    });
    const result = await verifyLedger(db);
    assert.equal(result.ok, false);
    assert.deepEqual(
      {
        seq: result.broken?.seq,
        kind: result.broken?.kind,
        id: result.broken?.entity_id,
      },
      { seq: 3, kind: "run", id: "run-2" },
    );
    assert.match(result.broken!.problem, /does not match its digest/);
  });
});

Deno.test("verifyLedger() names a deleted middle row and a deleted last row", async () => {
  await withDb(async (db) => {
    await seed(db);
    await tamper(
      db,
      (raw) =>
        raw.execute("DELETE FROM ledger_entries WHERE seq = 2").then(() => {}),
    );
    const middle = await verifyLedger(db);
    assert.equal(middle.broken?.seq, 2);
    assert.equal(middle.broken?.entity_id, "run-1");
    assert.match(middle.broken!.problem, /removed/);
  });
  await withDb(async (db) => {
    await seed(db);
    await tamper(
      db,
      (raw) =>
        raw.execute("DELETE FROM ledger_entries WHERE seq = 4").then(() => {}),
    );
    const tail = await verifyLedger(db);
    assert.equal(tail.ok, false);
    assert.equal(tail.broken?.seq, 4);
    assert.equal(tail.broken?.entity_id, "run-3");
    const dataDir = db.path!.replace(/\/trace\.db$/, "");
    const io = captureIo();
    assert.equal(
      await ledgerVerify(["--json", "--data-dir", dataDir], io),
      1,
    );
    assert.match(io.stderr(), /failed at entry 4 \(run "run-3"\)/);
    assert.equal(JSON.parse(io.stdout()).ok, false);
  });
});

Deno.test("verifyLedger() catches an edited target registration", async () => {
  await withDb(async (db) => {
    await seed(db);
    await tamper(db, async (raw) => {
      await raw.execute({
        sql:
          "UPDATE ledger_targets SET config_json = ? WHERE target_id = 'staging-a'",
        args: [JSON.stringify({ ...CONFIG, base_url: "http://127.0.0.1:2" })],
      });
    });
    const result = await verifyLedger(db);
    assert.equal(result.broken?.kind, "target");
    assert.equal(result.broken?.entity_id, "staging-a");
  });
});

Deno.test("verifyLedger() catches an edited created_at and an edited target_id", async (t) => {
  const edits: [string, string][] = [
    [
      "created_at",
      "UPDATE ledger_entries SET created_at = '2020-01-01T00:00:00.000Z' WHERE seq = 3",
    ],
    [
      "target_id",
      "UPDATE ledger_entries SET target_id = 'staging-b' WHERE seq = 3",
    ],
  ];
  for (const [column, sql] of edits) {
    await t.step(column, async () => {
      await withDb(async (db) => {
        await seed(db);
        await tamper(db, (raw) => raw.execute(sql).then(() => {}));
        const result = await verifyLedger(db);
        assert.equal(result.ok, false);
        assert.equal(result.broken?.seq, 3);
        assert.equal(result.broken?.entity_id, "run-2");
        assert.match(result.broken!.problem, /chain digest does not match/);
      });
    });
  }
});

Deno.test("verifyLedger() checks version-1 rows by their own rule and refuses a lowered version", async () => {
  await withDb(async (db) => {
    // A ledger written before chain versions existed: schema 2, version-1 digests.
    await migrate(db, LEDGER_MIGRATIONS.slice(0, 2));
    const createdAt = "2026-01-01T00:00:00.000Z";
    const payload = canonicalJson({
      run_id: "run-old",
      verdict: "PASS",
      findings: [],
    });
    const digest = payloadDigest(payload);
    const chain = chainDigest({
      chain_version: 1,
      prev_chain: GENESIS,
      kind: "run",
      entity_id: "run-old",
      target_id: null,
      payload_digest: digest,
      created_at: createdAt,
    });
    await db.client.execute({
      sql: `INSERT INTO ledger_entries
        (kind, entity_id, target_id, payload, payload_digest, prev_chain, chain_digest, created_at)
        VALUES ('run', 'run-old', NULL, ?, ?, ?, ?, ?)`,
      args: [payload, digest, GENESIS, chain, createdAt],
    });
    await db.client.execute({
      sql: `INSERT INTO ledger_head
        (entry_seq, entry_count, kind, entity_id, chain_digest, created_at)
        VALUES (1, 1, 'run', 'run-old', ?, ?)`,
      args: [chain, createdAt],
    });
    await seed(db);
    const versions = await db.client.execute(
      "SELECT chain_version FROM ledger_entries ORDER BY seq",
    );
    assert.deepEqual(versions.rows.map((r) => Number(r.chain_version)), [
      1,
      2,
      2,
      2,
      2,
    ]);
    assert.equal((await verifyLedger(db)).ok, true);
    await tamper(
      db,
      (raw) =>
        raw.execute(
          "UPDATE ledger_entries SET chain_version = 1 WHERE seq = 4",
        ).then(() => {}),
    );
    const lowered = await verifyLedger(db);
    assert.equal(lowered.broken?.seq, 4);
    assert.match(lowered.broken!.problem, /chain_version is lower/);
  });
});

Deno.test("readRun() refuses to present a row that was edited after it was written", async () => {
  await withDb(async (db, dataDir) => {
    await migrate(db, ALL_MIGRATIONS);
    const clock = new VirtualClock();
    const { report } = await runExternal(stagingConfig(), {
      db,
      dataDir,
      target: { id: "t", base_url: "http://127.0.0.1:1", source: "config" },
      transport: new FakeTarget(clock),
      clock,
      trace: false,
    });
    await db.client.execute("DROP TRIGGER ledger_entries_no_update");
    await db.client.execute({
      sql:
        "UPDATE ledger_entries SET payload = replace(payload, '\"PASS\"', '\"FAIL\"') WHERE entity_id = ?",
      args: [report.run_id],
    });
    await assert.rejects(
      () => readRun(db, report.run_id),
      /The ledger is broken at entry 1: run trace ledger verify$/,
    );
  });
});

Deno.test("every ledger reader refuses an edited row: regressions and reference history", async () => {
  await withDb(async (db) => {
    await seed(db);
    const definition = {
      schema: "trace.regression/1",
      regression_id: "reg-1",
      source_run_id: "run-1",
      saved_at: "2026-11-29T10:00:00.000Z",
      target: { id: "staging-a" },
      contract: {},
      assertions: [],
    };
    await appendEntry(db, {
      kind: "regression",
      entityId: "reg-1",
      targetId: "staging-a",
      payload: definition,
    });
    await appendEntry(db, {
      kind: "reference_run",
      entityId: "run-ref-1",
      targetId: "reference-correct",
      payload: {
        run_id: "run-ref-1",
        target: { id: "reference-correct" },
        verdict: "PASS",
        findings: [],
      },
    });
    assert.equal((await listRegressions(db)).length, 1);
    assert.equal((await listReferenceRuns(db)).length, 1);
    await tamper(db, async (raw) => {
      await raw.execute(
        `UPDATE ledger_entries SET payload = replace(payload, '"run-1"', '"run-2"') WHERE kind = 'regression'`,
      );
      await raw.execute(
        `UPDATE ledger_entries SET payload = replace(payload, 'run-ref-1', 'run-ref-2') WHERE kind = 'reference_run'`,
      );
    });
    const edited = (error: Error) =>
      error instanceof LedgerIntegrityError &&
      /^The ledger is broken at entry \d+: run trace ledger verify$/.test(
        error.message,
      );
    await assert.rejects(() => listRegressions(db), edited);
    await assert.rejects(() => readRegression(db, "reg-1"), edited);
    await assert.rejects(() => listReferenceRuns(db), edited);
    await assert.rejects(() => latestReferenceRuns(db), edited);
    await assert.rejects(() => readReferenceRun(db, "run-ref-1"), edited);
  });
});
