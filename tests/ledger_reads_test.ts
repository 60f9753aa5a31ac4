/**
 * Every command that presents ledger evidence or acts on it verifies it
 * against the chain and refuses altered data (exit 2, naming the entry);
 * the head kept outside the database catches a truncated tail.
 */

import assert from "node:assert/strict";
import type { Client } from "@libsql/client";
import { withoutTriggers, withRawClient } from "./_tamper.ts";
import { createApp } from "../routes/app.ts";
import { ADMIN_TOKEN, at, page } from "./browser/_server.ts";
import { canonicalJson, digestOf } from "../lib/canonical_json.ts";
import type { TraceDb } from "../lib/db.ts";
import {
  appendEntry,
  listEntries,
  payloadDigest,
  toEntry,
} from "../lib/ledger/chain.ts";
import { chainDigest, GENESIS } from "../lib/ledger/_entry.ts";
import { saveRegression } from "../lib/ledger/regressions.ts";
import { withDb, withServer } from "./_helpers.ts";
import {
  CONFIG,
  fakeReplay,
  fakeRun,
  trace,
  withStagingA,
} from "./_unrecorded.ts";

function dataDirOf(db: TraceDb): string {
  return db.path!.replace(/\/trace\.db$/, "");
}

interface Seeded {
  failRunId: string;
  regressionId: string;
  replayRunId: string;
}

/** A target, a FAIL saved as a regression, a PASS replay (enforced), then a FAIL replay: the gate fails. */
async function seed(db: TraceDb, dir: string): Promise<Seeded> {
  await withStagingA(db);
  const fail = await fakeRun(db, dir, { staleCache: true });
  const { regression } = await saveRegression(db, fail.run_id);
  await fakeReplay(db, dir, regression.regression_id, {});
  const again = await fakeReplay(db, dir, regression.regression_id, {
    staleCache: true,
  });
  return {
    failRunId: fail.run_id,
    regressionId: regression.regression_id,
    replayRunId: again.run_id,
  };
}

/** Edits the file with a plain client and no append-only triggers, as an outside tool could. */
function tamper(
  db: TraceDb,
  fn: (raw: Client) => Promise<void>,
): Promise<void> {
  return withoutTriggers(db, [
    "ledger_entries",
    "ledger_head",
    "ledger_targets",
  ], fn);
}

/** Rewrites the payload of entry `seq` with `edit`, recomputing its payload digest (which anyone can). */
async function rewritePayload(
  raw: Client,
  seq: number,
  edit: (payload: Record<string, unknown>) => Record<string, unknown>,
): Promise<void> {
  const entry = toEntry(
    (await raw.execute({
      sql: "SELECT * FROM ledger_entries WHERE seq = ?",
      args: [seq],
    })).rows[0]!,
  );
  const payload = canonicalJson(edit(JSON.parse(entry.payload)));
  await raw.execute({
    sql:
      "UPDATE ledger_entries SET payload = ?, payload_digest = ? WHERE seq = ?",
    args: [payload, payloadDigest(payload), seq],
  });
}

async function lastReplaySeq(db: TraceDb): Promise<number> {
  return (await listEntries(db, "replay")).at(-1)!.seq;
}

function refusal(command: string, seq: number): string {
  return `trace ${command}: The ledger is broken at entry ${seq}: run trace ledger verify\n`;
}

/** Recomputes every chain digest and head record, as someone who rewrites the whole chain would. */
async function rechain(raw: Client): Promise<void> {
  const rows = (await raw.execute("SELECT * FROM ledger_entries ORDER BY seq"))
    .rows.map(toEntry);
  let prev = GENESIS;
  for (const entry of rows) {
    const chain = chainDigest({ ...entry, prev_chain: prev });
    await raw.execute({
      sql:
        "UPDATE ledger_entries SET prev_chain = ?, chain_digest = ? WHERE seq = ?",
      args: [prev, chain, entry.seq],
    });
    await raw.execute({
      sql: "UPDATE ledger_head SET chain_digest = ? WHERE entry_seq = ?",
      args: [chain, entry.seq],
    });
    prev = chain;
  }
}

Deno.test("the gate and the run readers refuse a verdict rewritten with the whole chain recomputed", async () => {
  await withDb(async (db, dir) => {
    const seeded = await seed(db, dir);
    const data = ["--data-dir", dataDirOf(db)];
    const [run] = (await listEntries(db, "run")).filter((e) =>
      e.entity_id === seeded.replayRunId
    );
    const replaySeq = await lastReplaySeq(db);
    await tamper(db, async (raw) => {
      await rewritePayload(raw, run!.seq, (p) => ({ ...p, verdict: "PASS" }));
      await rewritePayload(raw, replaySeq, (p) => ({ ...p, verdict: "PASS" }));
      await rechain(raw);
    });
    // The chain checks out, the verdict does not: verify names the entry,
    // and every reader refuses the ledger as it refuses any edited entry.
    const verified = await trace(["ledger", "verify", ...data]);
    assert.equal(verified.code, 1);
    assert.match(
      verified.err,
      new RegExp(
        `^trace ledger verify: warning: the ledger's guards .*\\ntrace ledger verify: Ledger verification failed at entry ${
          run!.seq
        } \\(run "${seeded.replayRunId}"\\): its stored verdict is PASS but its findings imply FAIL \\(edited\\); restore trace\\.db from a backup`,
      ),
    );
    for (
      const command of [
        ["external-gate"],
        ["external-show", seeded.replayRunId],
        ["external-runs"],
      ]
    ) {
      const result = await trace([...command, ...data]);
      assert.equal(result.code, 2, `${command[0]}: ${result.out}`);
      assert.equal(
        result.err,
        `trace ${command[0]}: The ledger is broken at entry ${
          run!.seq
        }: run trace ledger verify\n`,
      );
    }
  });
});

Deno.test("the gate refuses a replay record whose verdict was rewritten with the whole chain recomputed", async () => {
  await withDb(async (db, dir) => {
    const seeded = await seed(db, dir);
    const replaySeq = await lastReplaySeq(db);
    await tamper(db, async (raw) => {
      await rewritePayload(raw, replaySeq, (p) => ({ ...p, verdict: "PASS" }));
      await rechain(raw);
    });
    const result = await trace(["external-gate", "--data-dir", dataDirOf(db)]);
    assert.equal(result.code, 2, result.out);
    assert.equal(
      result.err,
      `trace external-gate: Run ${seeded.replayRunId} (replay of ${seeded.regressionId}) is inconsistent: its replay record says PASS but its report and findings say FAIL, so an entry was rewritten; check the ledger against a head kept elsewhere with trace ledger verify --expect-head HEAD\n`,
    );
  });
});

Deno.test("the gate and every reader refuse a replay whose verdict was edited, digest recomputed", async () => {
  await withDb(async (db, dir) => {
    const seeded = await seed(db, dir);
    const data = ["--data-dir", dataDirOf(db)];
    assert.equal((await trace(["external-gate", ...data])).code, 1);
    const seq = await lastReplaySeq(db);
    await tamper(db, (raw) =>
      rewritePayload(raw, seq, (replay) => ({
        ...replay,
        verdict: "PASS",
        status_after: "enforced",
      })));
    const commands: [string, string[]][] = [
      ["external-gate", ["external-gate"]],
      ["external-gate", ["external-gate", "--target", "staging-a"]],
      ["external-regressions", ["external-regressions"]],
      ["external-show", ["external-show", seeded.replayRunId]],
      ["external-show", ["external-show", seeded.failRunId]],
      ["external-compare", [
        "external-compare",
        seeded.failRunId,
        seeded.replayRunId,
      ]],
      ["external-save", ["external-save", seeded.failRunId]],
      ["external-replay", ["external-replay", seeded.regressionId]],
      ["external-run", ["external-run", "--target", "staging-a"]],
      ["external-runs", ["external-runs"]],
      ["external-targets", ["external-targets"]],
      ["ledger head", ["ledger", "head"]],
    ];
    for (const [name, args] of commands) {
      const result = await trace([...args, ...data]);
      assert.equal(result.code, 2, args.join(" "));
      assert.equal(result.err, refusal(name, seq), args.join(" "));
      assert.equal(result.out, "", args.join(" "));
    }
    const json = await trace(["external-gate", "--json", ...data]);
    assert.deepEqual(JSON.parse(json.out), {
      error: {
        code: "ledger_integrity",
        message:
          `The ledger is broken at entry ${seq}: run trace ledger verify`,
      },
    });
  });
});

Deno.test("the gate refuses a ledger whose last replay was deleted", async () => {
  await withDb(async (db, dir) => {
    await seed(db, dir);
    const seq = await lastReplaySeq(db);
    await tamper(db, async (raw) => {
      await raw.execute({
        sql: "DELETE FROM ledger_entries WHERE seq = ?",
        args: [seq],
      });
    });
    const gate = await trace(["external-gate", "--data-dir", dataDirOf(db)]);
    assert.equal(gate.code, 2);
    assert.equal(gate.err, refusal("external-gate", seq));
  });
});

Deno.test("external-run --target refuses a target whose base_url was swapped, before any request, its --junit saying why", async () => {
  await withDb(async (db, dir) => {
    await seed(db, dir);
    const requests: string[] = [];
    await withServer((request) => {
      requests.push(new URL(request.url).pathname);
      return Response.json({});
    }, async (server) => {
      const swapped = { ...CONFIG, base_url: server.url };
      await tamper(db, async (raw) => {
        await raw.execute({
          sql:
            "UPDATE ledger_targets SET config_json = ?, config_digest = ? WHERE target_id = 'staging-a'",
          args: [canonicalJson(swapped), digestOf(swapped)],
        });
        const registration = (await raw.execute(
          "SELECT seq FROM ledger_entries WHERE kind = 'target'",
        )).rows[0]!;
        await rewritePayload(raw, Number(registration.seq), (payload) => ({
          ...payload,
          config: swapped,
          config_digest: digestOf(swapped),
        }));
      });
      const junit = `${dir}/out/junit.xml`;
      const run = await trace([
        "external-run",
        "--target",
        "staging-a",
        "--junit",
        junit,
        "--data-dir",
        dataDirOf(db),
      ]);
      assert.equal(run.code, 2);
      assert.equal(
        run.err,
        `junit: ${junit} (the run did not start)\n` +
          refusal("external-run", 1),
      );
      assert.deepEqual(requests, []);
      // Nothing of the ledger is presented: only the refusal, as an error.
      const xml = await Deno.readTextFile(junit);
      assert.match(
        xml,
        /<error message="The ledger is broken at entry 1: run trace ledger verify" type="ledger_integrity">/,
      );
      assert.doesNotMatch(xml, /staging-a|ledger_head|verdict/);
    });
  });
});

Deno.test("a reader refuses a row edited after it verified the chain, through the same handle", async (t) => {
  const rewrites: [string, (raw: Client, seq: number) => Promise<void>][] = [
    [
      "payload and payload digest",
      (raw, seq) =>
        rewritePayload(raw, seq, (p) => ({ ...p, verdict: "FAIL" })),
    ],
    [
      "payload, payload digest and chain digest of that row",
      async (raw, seq) => {
        await rewritePayload(raw, seq, (p) => ({ ...p, verdict: "FAIL" }));
        const entry = toEntry(
          (await raw.execute({
            sql: "SELECT * FROM ledger_entries WHERE seq = ?",
            args: [seq],
          })).rows[0]!,
        );
        const { chainDigest } = await import("../lib/ledger/chain.ts");
        await raw.execute({
          sql: "UPDATE ledger_entries SET chain_digest = ? WHERE seq = ?",
          args: [chainDigest(entry), seq],
        });
      },
    ],
    ["the row removed", async (raw, seq) => {
      await raw.execute({
        sql: "DELETE FROM ledger_entries WHERE seq = ?",
        args: [seq],
      });
    }],
  ];
  for (const [name, rewrite] of rewrites) {
    await t.step(name, async () => {
      await withDb(async (db, dir) => {
        await seed(db, dir);
        const replays = await listEntries(db, "replay");
        assert.equal(replays.length, 2);
        await tamper(db, (raw) => rewrite(raw, replays[0]!.seq));
        await assert.rejects(
          () => listEntries(db, "replay"),
          new RegExp(
            `The ledger is broken at entry ${
              replays[0]!.seq
            }: run trace ledger verify`,
          ),
        );
      });
    });
  }
});

Deno.test("a reader sees what another handle appended after it verified", async () => {
  await withDb(async (db, dir) => {
    await seed(db, dir);
    assert.equal((await listEntries(db, "run")).length, 3);
    const { openDb } = await import("../lib/db.ts");
    const other = await openDb({ dataDir: dir });
    try {
      await appendEntry(other, {
        kind: "run",
        entityId: "run-appended",
        targetId: "staging-a",
        payload: {
          run_id: "run-appended",
          target: { id: "staging-a" },
          verdict: "PASS",
          findings: [],
        },
      });
    } finally {
      other.close();
    }
    const runs = await listEntries(db, "run");
    assert.deepEqual(runs.map((r) => r.entity_id).at(-1), "run-appended");
  });
});

Deno.test("ledger verify --expect-head catches a truncated tail that the chain alone cannot", async () => {
  await withDb(async (db, dir) => {
    await seed(db, dir);
    const data = ["--data-dir", dataDirOf(db)];
    const head = await trace(["ledger", "head", "--json", ...data]);
    assert.equal(head.code, 0, head.err);
    const anchored = JSON.parse(head.out);
    assert.equal(anchored.schema, "trace.ledger-head/1");
    assert.match(anchored.head, /^\d+:sha256:[0-9a-f]{64}$/);
    const text = await trace(["ledger", "head", ...data]);
    assert.equal(text.out, `${anchored.head}\n`, "the head alone, for $(…)");
    assert.match(text.err, /entries; check later with: trace ledger verify/);
    const gate = await trace(["external-gate", ...data]);
    assert.match(
      gate.out,
      new RegExp(`^ledger head ${anchored.head} \\(`, "m"),
    );
    const gateJson = await trace(["external-gate", "--json", ...data]);
    assert.equal(JSON.parse(gateJson.out).ledger_head.head, anchored.head);

    // Appending keeps extending the head.
    await appendEntry(db, {
      kind: "run",
      entityId: "run-later",
      targetId: "staging-a",
      payload: {
        run_id: "run-later",
        target: { id: "staging-a" },
        verdict: "PASS",
        findings: [],
      },
    });
    const extended = await trace([
      "ledger",
      "verify",
      "--expect-head",
      anchored.head,
      ...data,
    ]);
    assert.equal(extended.code, 0, extended.err);
    assert.match(extended.out, /extends the expected head/);

    // Remove the last three entries with their head records: the chain still verifies.
    await tamper(db, async (raw) => {
      const last = anchored.seq as number;
      await raw.execute({
        sql: "DELETE FROM ledger_entries WHERE seq >= ?",
        args: [last - 1],
      });
      await raw.execute({
        sql: "DELETE FROM ledger_head WHERE entry_seq >= ?",
        args: [last - 1],
      });
    });
    assert.equal((await trace(["ledger", "verify", ...data])).code, 0);
    const truncated = await trace([
      "ledger",
      "verify",
      "--expect-head",
      anchored.head,
      "--json",
      ...data,
    ]);
    assert.equal(truncated.code, 1);
    const result = JSON.parse(truncated.out);
    assert.equal(result.ok, false);
    assert.deepEqual(result.expected_head, {
      head: anchored.head,
      extended: false,
    });
    assert.match(result.broken.problem, /no longer extends the expected head/);
    const bad = await trace([
      "ledger",
      "verify",
      "--expect-head",
      "12",
      ...data,
    ]);
    assert.equal(bad.code, 2);
    assert.match(bad.err, /Invalid head "12": expected SEQ:sha256:<64 hex>/);
  });
});

Deno.test("JUnit and Markdown outputs carry the ledger head after the run", async () => {
  const { withTempDir } = await import("./_helpers.ts");
  const { startDemoServer } = await import("../cli/demo.ts");
  await withTempDir(async (dir) => {
    const demo = await startDemoServer({ defect: null });
    try {
      const config = `${dir}/c.json`;
      await Deno.writeTextFile(
        config,
        JSON.stringify({
          base_url: demo.url,
          environment: "staging",
          allow_synthetic_writes: true,
          document_count: 1,
          deletion_window_seconds: 0.2,
          sample_interval_seconds: 0.1,
        }),
      );
      const data = ["--data-dir", `${dir}/data`];
      const run = await trace([
        "external-run",
        "--config",
        config,
        "--junit",
        `${dir}/r.xml`,
        "--summary-md",
        `${dir}/r.md`,
        ...data,
      ]);
      assert.equal(run.code, 0, run.err);
      const head = (await trace(["ledger", "head", ...data])).out.split(
        "\n",
      )[0]!;
      assert.match(
        await Deno.readTextFile(`${dir}/r.xml`),
        new RegExp(`<property name="ledger_head" value="${head}"/>`),
      );
      assert.ok(
        (await Deno.readTextFile(`${dir}/r.md`)).includes(
          `Ledger head after this run: \`${head}\``,
        ),
      );
      assert.match(run.err, new RegExp(`recorded in .*; head ${head}\\n`));
    } finally {
      await demo.shutdown();
    }
  });
});

Deno.test("trace serve says the ledger is broken, with the entry and the command, on pages and the API", async () => {
  await withDb(async (db, dir) => {
    const seeded = await seed(db, dir);
    const app = createApp({ db, uiAuthToken: ADMIN_TOKEN });
    const bearer = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const before = await app.request(at("/regressions"), page(bearer));
    assert.equal(before.status, 200, "verified and cached by this handle");
    const seq = await lastReplaySeq(db);
    await tamper(
      db,
      (raw) =>
        rewritePayload(raw, seq, (replay) => ({ ...replay, verdict: "PASS" })),
    );
    const message =
      `The ledger is broken at entry ${seq}: run trace ledger verify`;
    for (const path of ["/regressions", `/runs/${seeded.replayRunId}`]) {
      const answer = await app.request(at(path), page(bearer));
      assert.equal(answer.status, 500, path);
      assert.ok((await answer.text()).includes(message), path);
    }
  });
});

Deno.test("ledger verify --expect-head given a head that is not this ledger's says it may be another's, beside a rewrite", async () => {
  await withDb(async (db) => {
    const data = ["--data-dir", dataDirOf(db)];
    await withStagingA(db);
    for (const id of ["run-a", "run-b"]) {
      await appendEntry(db, {
        kind: "run",
        entityId: id,
        targetId: "staging-a",
        payload: {
          run_id: id,
          target: { id: "staging-a" },
          verdict: "PASS",
          findings: [],
        },
      });
    }
    const foreign = `2:sha256:${"ab".repeat(32)}`;
    const result = await trace([
      "ledger",
      "verify",
      "--expect-head",
      foreign,
      "--json",
      ...data,
    ]);
    assert.equal(result.code, 1);
    assert.equal(
      JSON.parse(result.out).broken.problem,
      "the ledger no longer extends the expected head: entry 2 has another chain digest (the file was rewritten or replaced, or the head is not this ledger's: an audit trail head, or another data directory's)",
    );
  });
});

Deno.test("a ledger table removed with sqlite is a broken ledger to verify and backup, and a one-line refusal to readers", async (t) => {
  for (const table of ["ledger_head", "ledger_entries", "ledger_targets"]) {
    await t.step(table, async () => {
      await withDb(async (db) => {
        const dir = dataDirOf(db);
        const data = ["--data-dir", dir];
        await withStagingA(db);
        await withRawClient(db, (raw) => raw.execute(`DROP TABLE ${table}`));
        const verify = await trace(["ledger", "verify", "--json", ...data]);
        assert.equal(verify.code, 1, verify.err);
        assert.deepEqual(JSON.parse(verify.out).broken, {
          seq: 0,
          kind: "(table)",
          entity_id: table,
          problem:
            `the table ${table} is missing: it was removed (the ledger's schema created it)`,
        });
        assert.equal(
          JSON.parse(verify.out).restore_steps,
          "docs/ledger.md#restoring-a-backup",
        );
        assert.match(
          verify.err,
          /; restore trace\.db from a backup \(trace ledger backup; steps in docs\/ledger\.md#restoring-a-backup\) or investigate/,
        );
        const backup = await trace([
          "ledger",
          "backup",
          `${dir}/copy.db`,
          ...data,
        ]);
        assert.equal(backup.code, 1, backup.err);
        assert.match(
          backup.out,
          new RegExp(`ledger BROKEN at entry 0 .*${table}`),
        );
        const head = await trace(["ledger", "head", ...data]);
        assert.equal(head.code, 2);
        assert.equal(
          head.err,
          `trace ledger head: The ledger's table ${table} was removed: run trace ledger verify\n`,
        );
      });
    });
  }
});
