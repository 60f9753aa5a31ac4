import assert from "node:assert/strict";
import { withRawClient } from "./_tamper.ts";
import { main } from "../cli.ts";
import { appendAudit, type AuditRecord } from "../lib/auth/mod.ts";
import { migrate, type TraceDb } from "../lib/db.ts";
import { registerTarget } from "../lib/ledger/targets.ts";
import { LEDGER_MIGRATIONS } from "../lib/ledger/schema.ts";
import { ALL_MIGRATIONS } from "../lib/migrations.ts";
import { guardsOf } from "../lib/schema_guards.ts";
import { captureIo, stagingConfig, withDb } from "./_helpers.ts";

const RECORD: AuditRecord = {
  actor: { name: "admin-1", role: "admin", via: "session" },
  action: "content.reveal",
  scope: { application_id: "app-1", user_id: "user-ada" },
  targets: { user_id: "user-ada" },
  reason: "SUP-1",
  outcome: "succeeded",
};

/** A ledger with one target and an audit trail with one entry. */
async function seed(db: TraceDb): Promise<void> {
  await migrate(db, ALL_MIGRATIONS);
  await registerTarget(db, {
    targetId: "staging-a",
    config: stagingConfig(),
    source: "registered",
  });
  await appendAudit(db, RECORD);
}

async function dropTrigger(db: TraceDb, name: string): Promise<void> {
  await withRawClient(db, (raw) => raw.execute(`DROP TRIGGER ${name}`));
}

async function run(args: string[]) {
  const io = captureIo();
  const code = await main(args, io);
  return { code, out: io.stdout(), err: io.stderr() };
}

Deno.test("guardsOf() names every trigger of the migrations applied, and none of a later one", () => {
  const names = (version: number) =>
    guardsOf(LEDGER_MIGRATIONS, "ledger", version).map((g) => g.name);
  assert.deepEqual(names(3), [
    "ledger_targets_no_update",
    "ledger_targets_no_delete",
    "ledger_entries_no_update",
    "ledger_entries_no_delete",
    "ledger_head_no_update",
    "ledger_head_no_delete",
  ]);
  assert.equal(names(4).length, 9);
});

Deno.test("trace ledger verify warns of a dropped guard and --restore-guards puts it back", async () => {
  await withDb(async (db, dataDir) => {
    await seed(db);
    await dropTrigger(db, "ledger_entries_no_delete");
    const data = ["--data-dir", dataDir];

    const text = await run(["ledger", "verify", ...data]);
    assert.equal(text.code, 0, text.err);
    assert.match(text.out, /ledger intact: 1 entry/);
    assert.match(
      text.err,
      /warning: the ledger's guards ledger_entries_no_delete are missing or changed .*no longer refuse UPDATE or DELETE; restore them with trace ledger verify --restore-guards/,
    );
    const json = await run(["ledger", "verify", "--json", ...data]);
    const answer = JSON.parse(json.out);
    assert.equal(answer.ok, true);
    assert.deepEqual(answer.missing_guards, ["ledger_entries_no_delete"]);

    const restored = await run([
      "ledger",
      "verify",
      "--restore-guards",
      "--json",
      ...data,
    ]);
    assert.equal(restored.code, 0, restored.err);
    assert.deepEqual(JSON.parse(restored.out).restored_guards, [
      "ledger_entries_no_delete",
    ]);
    assert.match(restored.err, /restored the ledger's guards/);
    await withRawClient(db, async (raw) => {
      await assert.rejects(
        () => raw.execute("DELETE FROM ledger_entries"),
        /append-only/,
      );
    });
    const again = await run(["ledger", "verify", "--json", ...data]);
    assert.deepEqual(JSON.parse(again.out).missing_guards, []);
    assert.equal(again.err, "");
  });
});

Deno.test("trace ledger verify names a guard replaced by a same-named trigger that refuses nothing", async () => {
  await withDb(async (db, dataDir) => {
    await seed(db);
    await withRawClient(db, async (raw) => {
      await raw.execute("DROP TRIGGER ledger_head_no_update");
      await raw.execute(
        "CREATE TRIGGER ledger_head_no_update BEFORE UPDATE ON ledger_head BEGIN SELECT 1; END",
      );
    });
    const data = ["--data-dir", dataDir];
    const json = await run(["ledger", "verify", "--json", ...data]);
    assert.deepEqual(JSON.parse(json.out).missing_guards, [
      "ledger_head_no_update",
    ]);
    await run(["ledger", "verify", "--restore-guards", ...data]);
    await withRawClient(db, async (raw) => {
      await assert.rejects(
        () => raw.execute("UPDATE ledger_head SET kind = 'x'"),
        /append-only/,
      );
    });
  });
});

Deno.test("trace audit verify --json names its schema and a dropped guard; --restore-guards puts it back", async () => {
  await withDb(async (db, dataDir) => {
    await seed(db);
    const data = ["--data-dir", dataDir];
    const intact = JSON.parse(
      (await run(["audit", "verify", "--json", ...data])).out,
    );
    assert.equal(intact.schema, "trace.audit-verify/1");
    assert.deepEqual(intact.missing_guards, []);

    await dropTrigger(db, "auth_audit_no_update");
    const text = await run(["audit", "verify", ...data]);
    assert.equal(text.code, 0, text.err);
    assert.match(
      text.err,
      /warning: the audit trail's guards auth_audit_no_update are missing or changed .*trace audit verify --restore-guards/,
    );
    const restored = await run([
      "audit",
      "verify",
      "--restore-guards",
      "--json",
      ...data,
    ]);
    assert.equal(restored.code, 0, restored.err);
    assert.deepEqual(JSON.parse(restored.out).restored_guards, [
      "auth_audit_no_update",
    ]);
    await withRawClient(db, async (raw) => {
      await assert.rejects(
        () => raw.execute("UPDATE auth_audit SET operator = 'x'"),
        /append-only/,
      );
    });
  });
});
