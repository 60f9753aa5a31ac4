/** The audit trail: append-only, hash-chained, content-free; `trace audit list` and `trace audit verify`. */

import assert from "node:assert/strict";
import { createClient } from "@libsql/client";
import { main } from "../cli.ts";
import {
  appendAudit,
  type AuditRecord,
  AuditUnavailableError,
  listAudit,
  verifyAudit,
} from "../lib/auth/mod.ts";
import { canonicalJson } from "../lib/canonical_json.ts";
import { migrate, type TraceDb } from "../lib/db.ts";
import { payloadDigest } from "../lib/ledger/chain.ts";
import { ALL_MIGRATIONS } from "../lib/migrations.ts";
import { captureIo, withDb } from "./_helpers.ts";

const RECORD: AuditRecord = {
  actor: { name: "admin-1", role: "admin", via: "session" },
  action: "content.reveal",
  scope: { application_id: "app-1", user_id: "user-ada" },
  targets: {
    agent_id: "support-bot",
    root_trace_id: "root-1",
    event_id: "evt-answer",
    user_id: "user-ada",
    resource: { type: "doc", id: "doc-1", version: "v3" },
  },
  reason: "SUP-1",
  outcome: "succeeded",
};

async function withAudit(
  fn: (db: TraceDb, dataDir: string) => Promise<void>,
): Promise<void> {
  await withDb(async (db, dataDir) => {
    await migrate(db, ALL_MIGRATIONS);
    await fn(db, dataDir);
  });
}

/** Runs `fn` on a plain client without the append-only triggers, as an outside tool could. */
async function tamper(
  db: TraceDb,
  fn: (raw: ReturnType<typeof createClient>) => Promise<void>,
): Promise<void> {
  const raw = createClient({ url: db.url });
  try {
    for (const table of ["auth_audit", "auth_audit_head"]) {
      await raw.execute(`DROP TRIGGER IF EXISTS ${table}_no_update`);
      await raw.execute(`DROP TRIGGER IF EXISTS ${table}_no_delete`);
    }
    await fn(raw);
  } finally {
    raw.close();
  }
}

Deno.test("audit entries are chained and verified; ids that identify a subject are keyed digests", async () => {
  await withAudit(async (db) => {
    const first = await appendAudit(db, RECORD);
    const second = await appendAudit(db, {
      ...RECORD,
      outcome: "refused",
      detail: "role",
    });
    assert.equal(second.seq, first.seq + 1);
    const result = await verifyAudit(db);
    assert.deepEqual(result, {
      ok: true,
      entries: 2,
      head: { seq: second.seq, chain_digest: second.chain_digest },
      expected_head: null,
      broken: null,
    });
    // deno-lint-ignore no-explicit-any
    const payload = first.payload as Record<string, any>;
    assert.equal(payload.targets.agent_id, "support-bot");
    assert.match(payload.targets.event_id, /^hmac-sha256:[0-9a-f]{64}$/);
    assert.match(payload.targets.user_id, /^hmac-sha256:/);
    assert.match(payload.scope.user_id, /^hmac-sha256:/);
    assert.equal(
      payload.scope.user_id,
      payload.targets.user_id,
      "one subject, one digest",
    );
    assert.match(payload.targets.resource.id, /^hmac-sha256:/);
    const stored = JSON.stringify(
      (await db.client.execute("SELECT * FROM auth_audit")).rows,
    );
    for (const raw of ["evt-answer", "user-ada", "doc-1"]) {
      assert.ok(!stored.includes(raw), `the trail holds ${raw}`);
    }
    // An anonymous subject stays a plain null.
    const anon = await appendAudit(db, {
      ...RECORD,
      scope: { user_id: null },
      targets: { user_id: null },
    });
    assert.equal((anon.payload.scope as { user_id: null }).user_id, null);
  });
});

Deno.test("the database refuses to change or delete an audit entry", async () => {
  await withAudit(async (db) => {
    await appendAudit(db, RECORD);
    await assert.rejects(
      db.client.execute("UPDATE auth_audit SET reason = 'x'"),
    );
    await assert.rejects(
      db.client.execute("UPDATE auth_audit SET operator = 'x'"),
      /append-only/,
    );
    await assert.rejects(
      db.client.execute("DELETE FROM auth_audit"),
      /append-only/,
    );
    await assert.rejects(
      db.client.execute("DELETE FROM auth_audit_head"),
      /append-only/,
    );
  });
});

Deno.test("verification names an edited entry, a removed entry and a removed last entry", async (t) => {
  for (
    const [name, edit, seq, problem] of [
      [
        "an edited reason",
        async (raw: ReturnType<typeof createClient>) => {
          const row =
            (await raw.execute("SELECT payload FROM auth_audit WHERE seq = 2"))
              .rows[0]!;
          const payload = canonicalJson({
            ...JSON.parse(String(row.payload)),
            reason: "routine check",
          });
          await raw.execute({
            sql: "UPDATE auth_audit SET payload = ? WHERE seq = 2",
            args: [payload],
          });
        },
        2,
        /payload digest mismatch/,
      ],
      [
        "an edited reason with its digest recomputed",
        async (raw: ReturnType<typeof createClient>) => {
          const row =
            (await raw.execute("SELECT payload FROM auth_audit WHERE seq = 2"))
              .rows[0]!;
          const payload = canonicalJson({
            ...JSON.parse(String(row.payload)),
            reason: "routine check",
          });
          await raw.execute({
            sql:
              "UPDATE auth_audit SET payload = ?, payload_digest = ? WHERE seq = 2",
            args: [payload, payloadDigest(payload)],
          });
        },
        2,
        /chain digest mismatch/,
      ],
      [
        "a removed middle entry",
        (raw: ReturnType<typeof createClient>) =>
          raw.execute("DELETE FROM auth_audit WHERE seq = 2").then(() => {}),
        3,
        /previous chain digest mismatch/,
      ],
      [
        "a removed last entry",
        (raw: ReturnType<typeof createClient>) =>
          raw.execute("DELETE FROM auth_audit WHERE seq = 3").then(() => {}),
        3,
        /the head names an entry that is no longer the last one/,
      ],
    ] as const
  ) {
    await t.step(name, async () => {
      await withAudit(async (db, dataDir) => {
        for (let i = 0; i < 3; i++) await appendAudit(db, RECORD);
        await tamper(db, edit);
        const result = await verifyAudit(db);
        assert.equal(result.ok, false);
        assert.equal(result.broken?.seq, seq);
        assert.match(result.broken!.problem, problem);
        const io = captureIo();
        const code = await main(["audit", "verify", "--data-dir", dataDir], io);
        assert.equal(code, 1, io.stderr());
        assert.match(io.stdout(), /audit trail BROKEN at seq/);
        assert.match(
          io.stderr(),
          /Audit trail verification failed at entry seq/,
        );
      });
    });
  }
});

Deno.test("trace audit list shows the newest entries first, filters by operator, action and subject, and checks each entry", async () => {
  await withAudit(async (db, dataDir) => {
    await appendAudit(db, RECORD);
    await appendAudit(db, {
      ...RECORD,
      actor: { name: "viewer-1", role: "viewer", via: "bearer" },
      outcome: "refused",
      detail: "role",
      targets: {},
      reason: null,
    });
    await appendAudit(db, {
      ...RECORD,
      action: "account.resolve",
      targets: { user_id: "user-bo" },
      reason: null,
    });
    const io = captureIo();
    assert.equal(
      await main(["audit", "list", "--data-dir", dataDir], io),
      0,
      io.stderr(),
    );
    const lines = io.stdout().trimEnd().split("\n");
    assert.match(
      lines[0]!,
      /^seq\s+at\s+operator\s+action\s+outcome\s+targets\s+reason$/,
    );
    assert.match(
      lines[1]!,
      /^\s*3 .* admin-1 \(admin\)\s+account\.resolve\s+succeeded\s+user_id=#[0-9a-f]{12}/,
    );
    assert.match(
      lines[2]!,
      /viewer-1 \(viewer\)\s+content\.reveal\s+refused: role/,
    );
    assert.match(
      lines[3]!,
      /event_id=#[0-9a-f]{12} .*resource=doc:#[0-9a-f]{12}.*"SUP-1"$/,
    );

    const json = captureIo();
    await main([
      "audit",
      "list",
      "--json",
      "--operator",
      "admin-1",
      "--data-dir",
      dataDir,
    ], json);
    assert.deepEqual(
      json.stdout().trimEnd().split("\n").map((line) => JSON.parse(line).seq),
      [3, 1],
    );
    const byAction = await listAudit(db, {
      action: "content.reveal",
      limit: 1,
    });
    assert.deepEqual(byAction.map((e) => e.seq), [2]);
    const bySubject = captureIo();
    await main([
      "audit",
      "list",
      "--json",
      "--subject",
      "user_id=user-bo",
      "--data-dir",
      dataDir,
    ], bySubject);
    assert.deepEqual(
      bySubject.stdout().trimEnd().split("\n").map((l) => JSON.parse(l).seq),
      [3],
    );
    const byEvent = await listAudit(db, {
      subject: { kind: "event_id", value: "evt-answer" },
    });
    assert.deepEqual(byEvent.map((e) => e.seq), [1]);
    const bad = captureIo();
    assert.equal(
      await main([
        "audit",
        "list",
        "--subject",
        "email=x",
        "--data-dir",
        dataDir,
      ], bad),
      2,
    );
    assert.match(
      bad.stderr(),
      /--subject takes KIND=VALUE with KIND one of user_id/,
    );

    await tamper(
      db,
      (raw) =>
        raw.execute(
          "UPDATE auth_audit SET payload = replace(payload, 'SUP-1', 'SUP-2') WHERE seq = 1",
        ).then(() => {}),
    );
    const altered = captureIo();
    assert.equal(
      await main(["audit", "list", "--data-dir", dataDir], altered),
      2,
    );
    assert.match(
      altered.stderr(),
      /The audit trail is broken at entry seq 1: run trace audit verify/,
    );
  });
});

Deno.test("trace audit verify on an intact trail prints the head; on a database without one it says so and creates nothing", async () => {
  await withAudit(async (db, dataDir) => {
    const io = captureIo();
    assert.equal(await main(["audit", "verify", "--data-dir", dataDir], io), 0);
    assert.match(io.stdout(), /audit trail intact: 0 entries/);
    const entry = await appendAudit(db, RECORD);
    const json = captureIo();
    assert.equal(
      await main(["audit", "verify", "--json", "--data-dir", dataDir], json),
      0,
    );
    assert.deepEqual(JSON.parse(json.stdout()).head, {
      seq: 1,
      chain_digest: entry.chain_digest,
    });
  });
  const empty = await Deno.makeTempDir();
  try {
    const io = captureIo();
    assert.equal(await main(["audit", "verify", "--data-dir", empty], io), 2);
    assert.match(io.stderr(), /No Trace data at .* yet/);
    assert.deepEqual([...Deno.readDirSync(empty)], [], "nothing was created");
  } finally {
    await Deno.remove(empty, { recursive: true });
  }
});

Deno.test("a forged operator, action or outcome column breaks verification, and list refuses the trail", async (t) => {
  for (
    const [column, value] of [
      ["operator", "someone"],
      ["action", "replay.plan"],
      ["outcome", "refused"],
      ["entry_id", "audit-forged"],
      ["created_at", "2020-01-01T00:00:00.000Z"],
    ] as const
  ) {
    await t.step(column, async () => {
      await withAudit(async (db, dataDir) => {
        for (let i = 0; i < 3; i++) await appendAudit(db, RECORD);
        await tamper(db, async (raw) => {
          await raw.execute({
            sql: `UPDATE auth_audit SET ${column} = ? WHERE seq = 2`,
            args: [value],
          });
        });
        const result = await verifyAudit(db);
        assert.equal(result.ok, false);
        assert.equal(result.broken?.seq, 2);
        assert.match(
          result.broken!.problem,
          new RegExp(`the ${column} column differs from the chained payload`),
        );
        const verify = captureIo();
        assert.equal(
          await main(["audit", "verify", "--data-dir", dataDir], verify),
          1,
        );
        await assert.rejects(
          listAudit(db),
          /The audit trail is broken at entry seq 2: run trace audit verify/,
        );
        for (
          const args of [
            [],
            ["--json"],
            ["--operator", "someone"],
            ["--action", "replay.plan"],
          ]
        ) {
          const io = captureIo();
          assert.equal(
            await main(["audit", "list", ...args, "--data-dir", dataDir], io),
            2,
            io.stdout(),
          );
          if (args[0] === "--json") {
            assert.deepEqual(JSON.parse(io.stdout()).error, {
              code: "ledger_integrity",
              message:
                "The audit trail is broken at entry seq 2: run trace audit verify",
            });
          } else {
            assert.equal(
              io.stdout(),
              "",
              "nothing of a broken trail is listed",
            );
            assert.match(io.stderr(), /audit trail is broken at entry seq 2/);
          }
        }
      });
    });
  }
});

Deno.test("an append refuses to extend a trail whose last entry was edited", async () => {
  await withAudit(async (db) => {
    await appendAudit(db, RECORD);
    await tamper(
      db,
      (raw) =>
        raw.execute("UPDATE auth_audit SET operator = 'someone' WHERE seq = 1")
          .then(() => {}),
    );
    await assert.rejects(
      appendAudit(db, RECORD),
      (error: Error) =>
        error instanceof AuditUnavailableError &&
        /broken at entry seq 1 .*operator column/.test(error.message),
    );
    assert.equal(
      Number(
        (await db.client.execute("SELECT COUNT(*) AS n FROM auth_audit"))
          .rows[0]!.n,
      ),
      1,
    );
  });
});

Deno.test("trace audit head, and verify --expect-head catches a last entry removed with its head record", async () => {
  await withAudit(async (db, dataDir) => {
    const emptyHead = captureIo();
    assert.equal(
      await main(["audit", "head", "--data-dir", dataDir], emptyHead),
      0,
      emptyHead.stderr(),
    );
    assert.match(emptyHead.stdout(), /^0:sha256:0{64}\n0 entries;/);
    for (let i = 0; i < 3; i++) await appendAudit(db, RECORD);
    const headIo = captureIo();
    assert.equal(
      await main(["audit", "head", "--json", "--data-dir", dataDir], headIo),
      0,
    );
    const head = JSON.parse(headIo.stdout());
    assert.equal(head.schema, "trace.audit-head/1");
    assert.equal(head.entries, 3);
    assert.match(head.head, /^3:sha256:[0-9a-f]{64}$/);
    const intact = captureIo();
    assert.equal(
      await main([
        "audit",
        "verify",
        "--expect-head",
        head.head,
        "--data-dir",
        dataDir,
      ], intact),
      0,
      intact.stderr(),
    );
    assert.match(intact.stdout(), /extends the expected head 3:sha256:/);

    await tamper(db, async (raw) => {
      await raw.execute("DELETE FROM auth_audit WHERE seq = 3");
      await raw.execute(
        "DELETE FROM auth_audit_head WHERE head_seq = (SELECT MAX(head_seq) FROM auth_audit_head)",
      );
    });
    // The head records live in the same file: without a head kept elsewhere this passes.
    const alone = captureIo();
    assert.equal(
      await main(["audit", "verify", "--data-dir", dataDir], alone),
      0,
    );
    const checked = captureIo();
    assert.equal(
      await main([
        "audit",
        "verify",
        "--json",
        "--expect-head",
        head.head,
        "--data-dir",
        dataDir,
      ], checked),
      1,
    );
    const result = JSON.parse(checked.stdout());
    assert.equal(result.ok, false);
    assert.deepEqual(result.expected_head, {
      head: head.head,
      extended: false,
    });
    assert.match(
      result.broken.problem,
      /no longer extends the expected head: it ends at entry seq 2/,
    );

    const bad = captureIo();
    assert.equal(
      await main([
        "audit",
        "verify",
        "--expect-head",
        "3:abc",
        "--data-dir",
        dataDir,
      ], bad),
      2,
    );
    assert.match(bad.stderr(), /as printed by trace audit head/);
  });
});

Deno.test("trace audit list escapes control characters and bidirectional overrides in text and JSON", async () => {
  await withAudit(async (db, dataDir) => {
    await appendAudit(db, {
      ...RECORD,
      reason: "csi \u009b31m red",
      targets: { agent_id: "spoof \u202eevil\u202c x" },
    });
    const io = captureIo();
    assert.equal(await main(["audit", "list", "--data-dir", dataDir], io), 0);
    const json = captureIo();
    assert.equal(
      await main(["audit", "list", "--json", "--data-dir", dataDir], json),
      0,
    );
    for (const output of [io.stdout(), json.stdout()]) {
      assert.doesNotMatch(output, /[\u0080-\u009f\u202a-\u202e\u2066-\u2069]/);
    }
    assert.match(io.stdout(), /"csi \\u\{009b\}31m red"/);
    assert.match(io.stdout(), /agent_id=spoof \\u\{202e\}evil\\u\{202c\} x/);
    const parsed = JSON.parse(json.stdout());
    assert.equal(parsed.reason, "csi \u009b31m red", "JSON keeps the value");
    assert.equal(parsed.targets.agent_id, "spoof \u202eevil\u202c x");
  });
});
