import assert from "node:assert/strict";
import { type Client, createClient } from "@libsql/client";
import { exitCodeFor } from "../cli.ts";
import { ledger } from "../cli/ledger.ts";
import { parseStagingConfig } from "../lib/contract/config.ts";
import { migrate, type TraceDb } from "../lib/db.ts";
import { LedgerIntegrityError } from "../lib/errors.ts";
import { appendEntry } from "../lib/ledger/chain.ts";
import { registerTarget } from "../lib/ledger/targets.ts";
import { verifyLedger } from "../lib/ledger/verify.ts";
import { ALL_MIGRATIONS } from "../lib/migrations.ts";
import { captureIo, withDb } from "./_helpers.ts";

const CONFIG = parseStagingConfig({
  base_url: "http://127.0.0.1:1",
  environment: "staging",
  allow_synthetic_writes: true,
});

/** A target registration (seq 1) and three runs (seq 2-4). */
async function seed(db: TraceDb): Promise<void> {
  await migrate(db, ALL_MIGRATIONS);
  await registerTarget(db, "staging-a", CONFIG, "registered");
  for (const n of [1, 2, 3]) {
    await appendEntry(db, "run", `run-${n}`, "staging-a", {
      run_id: `run-${n}`,
      target: { id: "staging-a" },
      verdict: "PASS",
    });
  }
}

/** Opens the file with a plain client, as an outside tool would, without the triggers. */
async function tamper(db: TraceDb, fn: (raw: Client) => Promise<void>) {
  const raw = createClient({ url: db.url });
  try {
    for (const table of ["ledger_entries", "ledger_targets"]) {
      await raw.execute(`DROP TRIGGER IF EXISTS ${table}_no_update`);
      await raw.execute(`DROP TRIGGER IF EXISTS ${table}_no_delete`);
    }
    await fn(raw);
  } finally {
    raw.close();
  }
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
      await ledger([
        "verify",
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
    await assert.rejects(
      () => ledger(["verify", "--json", "--data-dir", dataDir], io),
      (error: Error) => {
        assert.ok(error instanceof LedgerIntegrityError);
        assert.match(error.message, /seq 4 \(run "run-3"\)/);
        assert.equal(exitCodeFor(error), 1);
        return true;
      },
    );
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
