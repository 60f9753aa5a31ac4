/** The audit trail: append-only, hash-chained, content-free; `trace audit list` and `trace audit verify`. */

import assert from "node:assert/strict";
import type { Client } from "@libsql/client";
import { withoutTriggers, withRawClient } from "./_tamper.ts";
import { main } from "../cli.ts";
import {
  appendAudit,
  AuditIntegrityError,
  type AuditRecord,
  listAudit,
  verifyAudit,
} from "../lib/auth/mod.ts";
import { canonicalJson } from "../lib/canonical_json.ts";
import { migrate, openDb, type TraceDb } from "../lib/db.ts";
import {
  chainDigest,
  type EntryKind,
  GENESIS,
  payloadDigest,
} from "../lib/ledger/chain.ts";
import { subjectDigest } from "../lib/auth/subject_digest.ts";
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
function tamper(
  db: TraceDb,
  fn: (raw: Client) => Promise<void>,
): Promise<void> {
  return withoutTriggers(db, ["auth_audit", "auth_audit_head"], fn);
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
      schema: "trace.audit-verify/1",
      ok: true,
      entries: 2,
      head: { seq: second.seq, chain_digest: second.chain_digest },
      expected_head: null,
      broken: null,
      missing_guards: [],
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
        async (raw: Client) => {
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
        async (raw: Client) => {
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
        (raw: Client) =>
          raw.execute("DELETE FROM auth_audit WHERE seq = 2").then(() => {}),
        2,
        /entry seq 2 is missing/,
      ],
      [
        "a removed last entry",
        (raw: Client) =>
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
        assert.match(
          io.stderr(),
          /; restore trace\.db from a backup \(trace ledger backup; steps in docs\/ledger\.md#restoring-a-backup\) or investigate/,
        );
        const json = captureIo();
        await main(["audit", "verify", "--json", "--data-dir", dataDir], json);
        assert.equal(
          JSON.parse(json.stdout()).restore_steps,
          "docs/ledger.md#restoring-a-backup",
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
      JSON.parse(json.stdout()).entries.map((e: { seq: number }) => e.seq),
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
      JSON.parse(bySubject.stdout()).entries.map((e: { seq: number }) => e.seq),
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

Deno.test("trace audit list --json prints one object, its entries empty on an empty trail and when none match", async () => {
  await withAudit(async (db, dataDir) => {
    const list = async (...args: string[]) => {
      const io = captureIo();
      const code = await main(
        ["audit", "list", "--json", ...args, "--data-dir", dataDir],
        io,
      );
      assert.equal(code, 0, io.stderr());
      assert.equal(io.stdout().split("\n").length, 2, io.stdout());
      return JSON.parse(io.stdout());
    };
    const empty = { schema: "trace.audit-list/1", entries: [] };
    assert.deepEqual(await list(), empty);
    await appendAudit(db, RECORD);
    assert.deepEqual(await list("--operator", "nobody"), empty);
    const one = await list();
    assert.equal(one.schema, "trace.audit-list/1");
    assert.deepEqual(one.entries.map((e: { seq: number }) => e.seq), [1]);
  });
});

Deno.test("trace audit list refuses an --action no entry can have and an empty --subject value, rather than answering that nothing matches", async (t) => {
  await withAudit(async (db, dataDir) => {
    await appendAudit(db, RECORD);
    const cases: [string[], RegExp][] = [
      [
        ["--action", "content.revea"],
        /^trace audit list: Unknown --action "content\.revea" \(did you mean content\.reveal\?\): audited actions are artifact\.lookup, replay\.plan, replay\.draft, account\.resolve, content\.reveal, subject\.erase\n$/,
      ],
      [
        ["--action", "trace.read"],
        /^trace audit list: Unknown --action "trace\.read": audited actions are artifact\.lookup, .*subject\.erase\n$/,
      ],
      [
        ["--subject", "event_id="],
        /^trace audit list: --subject event_id= has no value: give the id after =, e\.g\. --subject event_id=evt-42\n$/,
      ],
    ];
    for (const [flags, message] of cases) {
      await t.step(flags.join(" "), async () => {
        const io = captureIo();
        assert.equal(
          await main(["audit", "list", ...flags, "--data-dir", dataDir], io),
          2,
          io.stdout(),
        );
        assert.equal(io.stdout(), "");
        assert.match(io.stderr(), message);
      });
    }
    const io = captureIo();
    assert.equal(
      await main([
        "audit",
        "list",
        "--action",
        "content.reveal",
        "--json",
        "--data-dir",
        dataDir,
      ], io),
      0,
      io.stderr(),
    );
    assert.deepEqual(
      JSON.parse(io.stdout()).entries.map((e: { seq: number }) => e.seq),
      [1],
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
              code: "audit_integrity",
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
        error instanceof AuditIntegrityError &&
        error.code === "audit_integrity" &&
        /broken at entry seq 1 .*operator column.*trace audit verify/.test(
          error.message,
        ),
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
    assert.match(emptyHead.stdout(), /^0:sha256:0{64}\n$/);
    assert.match(emptyHead.stderr(), /^0 entries; check later with: /);
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
    // The table's sequence still remembers seq 3 was handed out.
    const counted = captureIo();
    assert.equal(
      await main(["audit", "verify", "--data-dir", dataDir], counted),
      1,
    );
    assert.match(counted.stdout(), /BROKEN at seq 3: .*seqs up to 3/);
    // Reset that, and the head records' sequence still remembers head 3.
    await tamper(db, async (raw) => {
      await raw.execute(
        "UPDATE sqlite_sequence SET seq = 2 WHERE name = 'auth_audit'",
      );
    });
    const heads = captureIo();
    assert.equal(
      await main(["audit", "verify", "--data-dir", dataDir], heads),
      1,
    );
    assert.match(heads.stdout(), /BROKEN at seq 3: .*head records up to 3/);
    // Reset that too, and the file alone cannot tell: only a head kept elsewhere can.
    await tamper(db, async (raw) => {
      await raw.execute(
        "UPDATE sqlite_sequence SET seq = 2 WHERE name = 'auth_audit_head'",
      );
    });
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
    const [parsed] = JSON.parse(json.stdout()).entries;
    assert.equal(parsed.reason, "csi \u009b31m red", "JSON keeps the value");
    assert.equal(parsed.targets.agent_id, "spoof \u202eevil\u202c x");
  });
});

/** Runs `fn` with a second handle on the same file, as another process would open it. */
async function withFreshHandle(
  dataDir: string,
  fn: (db: TraceDb) => Promise<void>,
): Promise<void> {
  const db = await openDb({ dataDir });
  try {
    await fn(db);
  } finally {
    db.close();
  }
}

Deno.test("audit verify names a removed entry once a later entry has been chained over the gap it left", async () => {
  await withAudit(async (db, dataDir) => {
    for (let n = 0; n < 3; n++) await appendAudit(db, RECORD);
    // Entry 2 goes, and entry 3 is replaced by a copy of it that chains onto
    // entry 1 with the newest head naming it: links, digests, head and the
    // table's sequence all agree; only the numbering shows the hole.
    await tamper(db, async (raw) => {
      await raw.batch([
        "CREATE TEMP TABLE kept AS SELECT * FROM auth_audit WHERE seq = 2",
        "DELETE FROM auth_audit WHERE seq >= 2",
        "DELETE FROM auth_audit_head WHERE entry_seq >= 2",
        `INSERT INTO auth_audit SELECT 3, entry_id, created_at, operator, action,
           outcome, payload, payload_digest, prev_chain, chain_digest FROM kept`,
        `INSERT INTO auth_audit_head (entry_seq, entry_count, chain_digest, created_at)
           SELECT 3, 2, chain_digest, created_at FROM auth_audit WHERE seq = 3`,
      ], "write");
    });
    const result = await verifyAudit(db);
    assert.equal(result.ok, false);
    assert.deepEqual(result.broken, {
      seq: 2,
      problem:
        "entry seq 2 is missing (it was removed: seq numbers are never reused)",
    });
    // Another process's first append walks the trail and extends nothing.
    await withFreshHandle(dataDir, async (fresh) => {
      await assert.rejects(
        appendAudit(fresh, RECORD),
        (error: Error) =>
          error instanceof AuditIntegrityError && error.seq === 2 &&
          /entry seq 2 .*trace audit verify/.test(error.message),
      );
    });
    await assert.rejects(listAudit(db), /broken at entry seq 2/);
  });
});

Deno.test("audit verify names entries removed from the end with their head records, by the table's sequence", async () => {
  await withAudit(async (db) => {
    for (let n = 0; n < 3; n++) await appendAudit(db, RECORD);
    await tamper(db, async (raw) => {
      await raw.execute("DELETE FROM auth_audit WHERE seq = 3");
      await raw.execute("DELETE FROM auth_audit_head WHERE entry_seq = 3");
    });
    const result = await verifyAudit(db);
    assert.equal(result.broken?.seq, 3);
    assert.match(result.broken!.problem, /seqs up to 3 were handed out/);
  });
});

Deno.test("an append through a long-lived handle notices that the entry it wrote last is gone", async () => {
  await withAudit(async (db, dataDir) => {
    for (let n = 0; n < 3; n++) await appendAudit(db, RECORD);
    // The end removed with its head record and both sequences wound back:
    // the file alone no longer shows it (a new process would append seq 3 again).
    await tamper(db, async (raw) => {
      await raw.execute("DELETE FROM auth_audit WHERE seq = 3");
      await raw.execute("DELETE FROM auth_audit_head WHERE entry_seq = 3");
      await raw.execute(
        "UPDATE sqlite_sequence SET seq = 2 WHERE name IN ('auth_audit', 'auth_audit_head')",
      );
    });
    assert.equal((await verifyAudit(db)).ok, true);
    await assert.rejects(
      appendAudit(db, RECORD),
      (error: Error) =>
        error instanceof AuditIntegrityError && error.seq === 3 &&
        /the entry this process appended last is gone/.test(error.message),
    );
    await withFreshHandle(dataDir, async (fresh) => {
      assert.equal((await appendAudit(fresh, RECORD)).seq, 3);
    });
  });
});

Deno.test("an append through a long-lived handle walks the trail again after a trigger was dropped", async () => {
  await withAudit(async (db) => {
    for (let n = 0; n < 3; n++) await appendAudit(db, RECORD);
    await tamper(db, async (raw) => {
      await raw.execute(
        "UPDATE auth_audit SET outcome = 'refused' WHERE seq = 1",
      );
    });
    await assert.rejects(
      appendAudit(db, RECORD),
      (error: Error) =>
        error instanceof AuditIntegrityError && error.seq === 1 &&
        /outcome column/.test(error.message),
    );
  });
});

Deno.test("the audit trail refuses INSERT OR REPLACE over an entry or a head record, as the ledger does, without any trigger dropped", async () => {
  await withAudit(async (db) => {
    await appendAudit(db, RECORD);
    await appendAudit(db, RECORD);
    await withRawClient(db, async (client) => {
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
      await assert.rejects(
        client.execute(
          `INSERT OR REPLACE INTO auth_audit_head
             SELECT head_seq, entry_seq, entry_count, chain_digest, created_at
             FROM auth_audit_head WHERE head_seq = 1`,
        ),
        /append-only/,
      );
    });
    assert.equal((await verifyAudit(db)).ok, true);
  });
});

Deno.test("the audit trail's subject key can be neither deleted nor replaced beside it", async () => {
  await withAudit(async (db) => {
    await appendAudit(db, RECORD);
    await withRawClient(db, async (client) => {
      const keys = await client.execute("SELECT COUNT(*) AS n FROM auth_keys");
      assert.equal(Number(keys.rows[0]!.n), 1);
      await assert.rejects(client.execute("DELETE FROM auth_keys"));
      await assert.rejects(
        client.execute(
          "INSERT OR REPLACE INTO auth_keys SELECT name, 'other', created_at FROM auth_keys",
        ),
        /never changed/,
      );
    });
    assert.equal((await verifyAudit(db)).ok, true);
  });
});

/** Runs `trace audit list --subject event_id=evt-answer`, as JSON if asked, and reads its one error message. */
async function listEvtAnswer(
  dataDir: string,
  json: boolean,
): Promise<{ code: number; stdout: string; message: string }> {
  const io = captureIo();
  const code = await main([
    "audit",
    "list",
    "--subject",
    "event_id=evt-answer",
    ...(json ? ["--json"] : []),
    "--data-dir",
    dataDir,
  ], io);
  const message = json
    ? JSON.parse(io.stdout()).error.message
    : io.stderr().trim();
  return { code, stdout: io.stdout(), message };
}

Deno.test("a deleted subject key is named by verify, list --subject and the next append, never read as no match", async () => {
  await withAudit(async (db, dataDir) => {
    await appendAudit(db, RECORD);
    await withRawClient(db, async (client) => {
      await client.execute("DROP TRIGGER auth_keys_no_delete");
      await client.execute("DELETE FROM auth_keys");
    });
    const result = await verifyAudit(db);
    assert.equal(result.broken?.seq, 1);
    assert.match(result.broken!.problem, /subject key .* is missing/);
    for (const json of [false, true]) {
      const { code, stdout, message } = await listEvtAnswer(dataDir, json);
      assert.equal(code, 2);
      assert.doesNotMatch(stdout, /No audit entries match/);
      assert.match(message, /subject key is missing/);
      assert.match(message, /run trace audit verify$/);
      assert.equal(message.split("\n").length, 1);
    }
    await assert.rejects(appendAudit(db, RECORD), AuditIntegrityError);
    const keys = await db.client.execute("SELECT COUNT(*) AS n FROM auth_keys");
    assert.equal(Number(keys.rows[0]!.n), 0, "no new key was made");
  });
});

Deno.test("a replaced subject key is named by verify", async () => {
  await withAudit(async (db) => {
    await appendAudit(db, RECORD);
    await withRawClient(db, async (client) => {
      await client.execute("DROP TRIGGER auth_keys_no_delete");
      await client.execute("DELETE FROM auth_keys");
      await client.execute(
        "INSERT INTO auth_keys VALUES ('subject_digest', 'other', '2999-01-01T00:00:00.000Z')",
      );
    });
    const result = await verifyAudit(db);
    assert.equal(result.broken?.seq, 1);
    assert.match(result.broken!.problem, /not the one this entry was written/);
  });
});

/** Deletes the subject key and writes `secret` in its place under the same name and time. */
async function replaceKey(
  db: TraceDb,
  secret: (old: string) => string,
  createdAt?: string,
): Promise<void> {
  await withRawClient(db, async (client) => {
    await client.execute("DROP TRIGGER auth_keys_no_delete");
    const row = (await client.execute(
      "SELECT name, secret, created_at FROM auth_keys",
    )).rows[0]!;
    await client.execute("DELETE FROM auth_keys");
    await client.execute({
      sql: "INSERT INTO auth_keys (name, secret, created_at) VALUES (?, ?, ?)",
      args: [
        String(row.name),
        secret(String(row.secret)),
        createdAt ?? String(row.created_at),
      ],
    });
  });
}

Deno.test("a subject key replaced under the same name and time is named by verify, list --subject and the next append", async () => {
  await withAudit(async (db, dataDir) => {
    await appendAudit(db, RECORD);
    await appendAudit(db, { ...RECORD, reason: "SUP-2" });
    await replaceKey(db, (old) => "0".repeat(old.length));
    const result = await verifyAudit(db);
    assert.equal(result.ok, false, JSON.stringify(result));
    assert.equal(result.broken?.seq, 1);
    assert.match(
      result.broken!.problem,
      /subject key .* is not the one this entry was written with/,
    );
    const verifyIo = captureIo();
    assert.equal(
      await main(["audit", "verify", "--data-dir", dataDir], verifyIo),
      1,
    );
    assert.match(
      verifyIo.stdout(),
      /^audit trail BROKEN at seq 1: the subject key in auth_keys is not the one this entry was written with/,
    );
    for (const json of [false, true]) {
      const { code, stdout, message } = await listEvtAnswer(dataDir, json);
      assert.equal(code, 2);
      assert.doesNotMatch(stdout, /No audit entries match/);
      assert.match(
        message,
        /The audit trail's subject key is not the one entry seq 1 was written with \(it was replaced\).*: run trace audit verify$/,
      );
      assert.equal(message.split("\n").length, 1);
      assert.ok(!message.includes("0000000000"), "no key in the message");
    }
    await assert.rejects(
      appendAudit(db, RECORD),
      (error: Error) =>
        error instanceof AuditIntegrityError &&
        /not the one this entry was written with/.test(error.message),
    );
  });
});

/** Writes a trail as entries of payload version 1 (no key fingerprint) were written. */
async function writeVersion1Trail(db: TraceDb, count: number): Promise<void> {
  const key = "ab".repeat(32);
  const keyTime = "2026-01-01T00:00:00.000Z";
  await db.client.execute({
    sql: "INSERT INTO auth_keys (name, secret, created_at) VALUES (?, ?, ?)",
    args: ["subject_digest", key, keyTime],
  });
  let prev = GENESIS;
  for (let seq = 1; seq <= count; seq++) {
    const entryId = `audit-legacy-${seq}`;
    const at = `2026-01-02T00:00:0${seq}.000Z`;
    const text = canonicalJson({
      v: 1,
      entry_id: entryId,
      at,
      operator: "admin-1",
      role: "admin",
      via: "session",
      action: "content.reveal",
      outcome: "succeeded",
      detail: null,
      scope: {},
      targets: { event_id: subjectDigest(key, "event_id", "evt-answer") },
      reason: `SUP-${seq}`,
    });
    const digest = payloadDigest(text);
    const chain = chainDigest({
      chain_version: 2,
      prev_chain: prev,
      kind: "audit" as unknown as EntryKind,
      entity_id: entryId,
      target_id: null,
      created_at: at,
      payload_digest: digest,
    });
    await db.client.execute({
      sql: `INSERT INTO auth_audit (entry_id, created_at, operator, action,
          outcome, payload, payload_digest, prev_chain, chain_digest)
        VALUES (?, ?, 'admin-1', 'content.reveal', 'succeeded', ?, ?, ?, ?)`,
      args: [entryId, at, text, digest, prev, chain],
    });
    await db.client.execute({
      sql: `INSERT INTO auth_audit_head (entry_seq, entry_count, chain_digest,
          created_at) VALUES (?, ?, ?, ?)`,
      args: [seq, seq, chain, at],
    });
    prev = chain;
  }
}

Deno.test("a trail written before entries named their key still verifies, and the entries appended after it pin the key", async () => {
  await withAudit(async (db) => {
    await writeVersion1Trail(db, 2);
    assert.equal((await verifyAudit(db)).ok, true);
    const subject = { kind: "event_id", value: "evt-answer" } as const;
    assert.equal((await listAudit(db, { subject })).length, 2);
    const appended = await appendAudit(db, RECORD);
    assert.equal(appended.seq, 3);
    assert.equal(appended.payload.v, 2);
    assert.match(
      String(appended.payload.subject_key),
      /^hmac-sha256:[0-9a-f]{64}$/,
    );
    assert.equal((await verifyAudit(db)).ok, true);
    assert.equal((await listAudit(db, { subject })).length, 3);
    await replaceKey(db, (old) => "0".repeat(old.length));
    const result = await verifyAudit(db);
    assert.equal(result.broken?.seq, 3, JSON.stringify(result));
    assert.match(result.broken!.problem, /not the one this entry was written/);
  });
});

Deno.test("a trail written before entries named their key still names a key newer than its first entry", async () => {
  await withAudit(async (db) => {
    await writeVersion1Trail(db, 2);
    await replaceKey(db, () => "cd".repeat(32), "2999-01-01T00:00:00.000Z");
    const result = await verifyAudit(db);
    assert.equal(result.broken?.seq, 1);
    assert.match(result.broken!.problem, /newer than the first entry/);
  });
});

/** Removes every entry and head record and both tables' sequences, as an outside tool could. */
async function removeWholeTrail(raw: Client): Promise<void> {
  await raw.batch([
    "DELETE FROM auth_audit",
    "DELETE FROM auth_audit_head",
    "DELETE FROM sqlite_sequence WHERE name IN ('auth_audit', 'auth_audit_head')",
  ], "write");
}

Deno.test("audit verify names a trail removed whole by the subject key it left behind, in text and JSON", async () => {
  await withAudit(async (db, dataDir) => {
    for (let n = 0; n < 3; n++) await appendAudit(db, RECORD);
    await tamper(db, removeWholeTrail);
    const result = await verifyAudit(db);
    assert.equal(result.ok, false);
    assert.equal(result.entries, 0);
    assert.equal(result.broken?.seq, 1);
    assert.match(
      result.broken!.problem,
      /^the trail has no entries, but the subject key in auth_keys, made only with the first entry, is still there: the whole trail was removed; .*--expect-head/,
    );
    const text = captureIo();
    assert.equal(
      await main(["audit", "verify", "--data-dir", dataDir], text),
      1,
    );
    assert.match(text.stdout(), /^audit trail BROKEN at seq 1: the trail has/);
    assert.doesNotMatch(text.stdout(), /intact/);
    assert.match(text.stderr(), /whole trail was removed.*from a backup/);
    // One line for the break, one warning for the triggers the removal dropped.
    const [warning, ...failure] = text.stderr().trimEnd().split("\n");
    assert.match(warning!, /warning: .* guards auth_audit_no_update, /);
    assert.equal(failure.length, 1);
    const json = captureIo();
    assert.equal(
      await main(["audit", "verify", "--json", "--data-dir", dataDir], json),
      1,
    );
    assert.deepEqual(JSON.parse(json.stdout()), {
      schema: "trace.audit-verify/1",
      ok: false,
      entries: 0,
      head: null,
      expected_head: null,
      broken: result.broken,
      restore_steps: "docs/ledger.md#restoring-a-backup",
      missing_guards: [
        "auth_audit_no_update",
        "auth_audit_no_delete",
        "auth_audit_head_no_update",
        "auth_audit_head_no_delete",
      ],
    });
    // Every reader and the next append refuse it, as for any broken trail.
    const head = captureIo();
    assert.equal(await main(["audit", "head", "--data-dir", dataDir], head), 2);
    assert.match(
      head.stderr(),
      /broken at entry seq 1: run trace audit verify/,
    );
    await assert.rejects(listAudit(db), /broken at entry seq 1/);
    await withFreshHandle(dataDir, async (fresh) => {
      await assert.rejects(
        appendAudit(fresh, RECORD),
        (error: Error) =>
          error instanceof AuditIntegrityError && error.seq === 1 &&
          /whole trail was removed/.test(error.message),
      );
    });
  });
});

Deno.test("audit verify names a trail removed whole with its key by a replay draft or the head records' sequence left behind", async (t) => {
  const cases: { name: string; left: string[] }[] = [
    {
      name: "a replay draft",
      left: [
        `INSERT INTO auth_replay_drafts (draft_id, created_at, operator,
           application_id, payload, payload_digest)
         VALUES ('replay-1', '2026-01-01T00:00:00.000Z', 'admin-1', 'app-1', '{}', 'sha256:0')`,
      ],
    },
    {
      name: "the head records' sequence",
      left: [
        "INSERT INTO sqlite_sequence (name, seq) VALUES ('auth_audit_head', 3)",
      ],
    },
  ];
  for (const { name, left } of cases) {
    await t.step(name, async () => {
      await withAudit(async (db) => {
        for (let n = 0; n < 3; n++) await appendAudit(db, RECORD);
        await tamper(db, async (raw) => {
          await removeWholeTrail(raw);
          await raw.execute("DROP TRIGGER auth_keys_no_delete");
          await raw.batch(["DELETE FROM auth_keys", ...left], "write");
        });
        const result = await verifyAudit(db);
        assert.equal(result.ok, false);
        assert.equal(result.broken?.seq, 1);
        assert.match(result.broken!.problem, /removed/);
      });
    });
  }
});

Deno.test("audit verify names entries removed from the end with the entries' sequence wound back, by the head records' sequence", async () => {
  await withAudit(async (db) => {
    for (let n = 0; n < 3; n++) await appendAudit(db, RECORD);
    await tamper(db, async (raw) => {
      await raw.batch([
        "DELETE FROM auth_audit WHERE seq = 3",
        "DELETE FROM auth_audit_head WHERE entry_seq = 3",
        "UPDATE sqlite_sequence SET seq = 2 WHERE name = 'auth_audit'",
      ], "write");
    });
    const result = await verifyAudit(db);
    assert.equal(result.broken?.seq, 3);
    assert.match(result.broken!.problem, /head records up to 3 were written/);
  });
});

Deno.test("an honestly empty trail verifies: a fresh database, no key, no entries", async () => {
  await withAudit(async (db, dataDir) => {
    assert.deepEqual(await verifyAudit(db), {
      schema: "trace.audit-verify/1",
      ok: true,
      entries: 0,
      head: null,
      expected_head: null,
      broken: null,
      missing_guards: [],
    });
    const io = captureIo();
    assert.equal(await main(["audit", "verify", "--data-dir", dataDir], io), 0);
    assert.equal(
      io.stdout(),
      "audit trail intact: 0 entries; head 0 (empty)\n",
    );
  });
});

Deno.test("audit verify --expect-head given a head that is not this trail's says it may be another's, beside a rewrite", async () => {
  await withAudit(async (db, dataDir) => {
    for (let i = 0; i < 2; i++) await appendAudit(db, RECORD);
    const io = captureIo();
    assert.equal(
      await main([
        "audit",
        "verify",
        "--expect-head",
        `2:sha256:${"ab".repeat(32)}`,
        "--json",
        "--data-dir",
        dataDir,
      ], io),
      1,
    );
    assert.equal(
      JSON.parse(io.stdout()).broken.problem,
      "the trail no longer extends the expected head: entry seq 2 has another chain digest (the trail was rewritten or the file replaced, or the head is not this trail's: a ledger head, or another data directory's)",
    );
  });
});

Deno.test("an audit table removed with sqlite is a broken trail to verify (exit 1) and a one-line refusal to list", async (t) => {
  for (
    const table of [
      "auth_audit",
      "auth_audit_head",
      "auth_keys",
      "auth_replay_drafts",
    ]
  ) {
    await t.step(table, async () => {
      await withAudit(async (db, dataDir) => {
        await appendAudit(db, RECORD);
        await withRawClient(db, (raw) => raw.execute(`DROP TABLE ${table}`));
        const verify = captureIo();
        assert.equal(
          await main(
            ["audit", "verify", "--json", "--data-dir", dataDir],
            verify,
          ),
          1,
          verify.stderr(),
        );
        assert.deepEqual(JSON.parse(verify.stdout()).broken, {
          seq: 0,
          problem:
            `the table ${table} is missing: it was removed (the audit trail's schema created it)`,
        });
        const list = captureIo();
        assert.equal(
          await main(["audit", "list", "--data-dir", dataDir], list),
          2,
        );
        assert.equal(
          list.stderr(),
          `trace audit list: The audit trail's table ${table} was removed: run trace audit verify\n`,
        );
      });
    });
  }
});
