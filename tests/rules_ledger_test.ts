/**
 * The rules `ledger verify` applies, one test each, every test built so that
 * only the rule under test can see the damage: the payload digest, the chain
 * digest over a row's columns, the link to the previous row, and the head
 * records that catch a removed or re-chained last row.
 */

import assert from "node:assert/strict";
import type { Client } from "@libsql/client";
import { withoutTriggers } from "./_tamper.ts";
import { canonicalJson } from "../lib/canonical_json.ts";
import { migrate, type TraceDb } from "../lib/db.ts";
import {
  appendEntry,
  chainDigest,
  payloadDigest,
  toEntry,
} from "../lib/ledger/chain.ts";
import { verifyLedger } from "../lib/ledger/verify.ts";
import { recordRun } from "../lib/ledger/runs.ts";
import type { RunReport } from "../lib/runner/report.ts";
import { ALL_MIGRATIONS } from "../lib/migrations.ts";
import { withDb } from "./_helpers.ts";

async function appendRun(db: TraceDb, n: number): Promise<void> {
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

/** Four runs at seq 1-4, verified intact. */
async function seed(db: TraceDb): Promise<void> {
  await migrate(db, ALL_MIGRATIONS);
  for (const n of [1, 2, 3, 4]) await appendRun(db, n);
  assert.equal((await verifyLedger(db)).ok, true);
}

/** Edits the file with a plain client and no append-only triggers, as an outside tool could. */
function tamper(
  db: TraceDb,
  fn: (raw: Client) => Promise<void>,
): Promise<void> {
  return withoutTriggers(db, ["ledger_entries", "ledger_head"], fn);
}

/** Rewrites row `seq` to say FAIL, recomputing its payload digest and, if asked, its chain digest. */
async function rewriteVerdict(
  raw: Client,
  seq: number,
  options: { rechain: boolean },
): Promise<void> {
  const row = (await raw.execute({
    sql: "SELECT * FROM ledger_entries WHERE seq = ?",
    args: [seq],
  })).rows[0]!;
  const entry = toEntry(row);
  // A rewrite that keeps the verdict and its findings agreeing: only the
  // digests and the head records can catch it.
  const payload = canonicalJson({
    ...JSON.parse(entry.payload),
    verdict: "FAIL",
    findings: [{
      severity: "fail",
      code: "marker_retrievable",
      subject: "retrieval",
      message: "rewritten",
      sample_indexes: [],
    }],
  });
  const digest = payloadDigest(payload);
  const chain = options.rechain
    ? chainDigest({ ...entry, payload_digest: digest })
    : entry.chain_digest;
  await raw.execute({
    sql:
      "UPDATE ledger_entries SET payload = ?, payload_digest = ?, chain_digest = ? WHERE seq = ?",
    args: [payload, digest, chain, seq],
  });
}

/** Appends run `n` the way a writer that does not verify first would. */
async function appendUnchecked(raw: Client, n: number): Promise<void> {
  const last = toEntry(
    (await raw.execute(
      "SELECT * FROM ledger_entries ORDER BY seq DESC LIMIT 1",
    )).rows[0]!,
  );
  const payload = canonicalJson({
    run_id: `run-${n}`,
    target: { id: "staging-a" },
    verdict: "PASS",
    findings: [],
  });
  const fields = {
    chain_version: 2,
    prev_chain: last.chain_digest,
    kind: "run" as const,
    entity_id: `run-${n}`,
    target_id: "staging-a",
    payload_digest: payloadDigest(payload),
    created_at: new Date().toISOString(),
  };
  const chain = chainDigest(fields);
  const seq = Number(
    (await raw.execute({
      sql: `INSERT INTO ledger_entries
        (kind, entity_id, target_id, payload, payload_digest, prev_chain, chain_digest, created_at, chain_version)
        VALUES ('run', ?, 'staging-a', ?, ?, ?, ?, ?, 2) RETURNING seq`,
      args: [
        fields.entity_id,
        payload,
        fields.payload_digest,
        fields.prev_chain,
        chain,
        fields.created_at,
      ],
    })).rows[0]!.seq,
  );
  await raw.execute({
    sql: `INSERT INTO ledger_head
      (entry_seq, entry_count, kind, entity_id, chain_digest, created_at)
      VALUES (?, (SELECT COUNT(*) FROM ledger_entries), 'run', ?, ?, ?)`,
    args: [seq, fields.entity_id, chain, fields.created_at],
  });
}

async function brokenAt(db: TraceDb): Promise<[number, string]> {
  const result = await verifyLedger(db);
  assert.equal(result.ok, false, "verify found nothing");
  return [result.broken!.seq, result.broken!.problem];
}

Deno.test("verifyLedger() names the removed entry after it: a middle row and its head removed, then an append", async () => {
  await withDb(async (db) => {
    await seed(db);
    await tamper(db, async (raw) => {
      await raw.execute("DELETE FROM ledger_entries WHERE seq = 2");
      await raw.execute("DELETE FROM ledger_head WHERE entry_seq = 2");
    });
    // An append by an older build (which did not verify first) links to the
    // last row and records a head that counts what is there now, so the head
    // records agree with the damaged chain.
    await tamper(db, (raw) => appendUnchecked(raw, 5));
    const [seq, problem] = await brokenAt(db);
    assert.equal(seq, 3);
    assert.match(problem, /^entry 2 before it is missing \(removed\)$/);
  });
});

Deno.test("verifyLedger() catches an edited payload by its digest", async () => {
  await withDb(async (db) => {
    await seed(db);
    await tamper(db, async (raw) => {
      await raw.execute(
        `UPDATE ledger_entries SET payload = replace(payload, '"PASS"', '"FAIL"') WHERE seq = 2`,
      );
    });
    const [seq, problem] = await brokenAt(db);
    assert.equal(seq, 2);
    assert.match(problem, /payload does not match its digest/);
  });
});

Deno.test("verifyLedger() catches an edited payload with a recomputed digest by the chain digest", async () => {
  await withDb(async (db) => {
    await seed(db);
    await tamper(db, (raw) => rewriteVerdict(raw, 2, { rechain: false }));
    const [seq, problem] = await brokenAt(db);
    assert.equal(seq, 2);
    assert.match(problem, /chain digest does not match its contents/);
  });
});

Deno.test("verifyLedger() catches a removed last row by its head record", async () => {
  await withDb(async (db) => {
    await seed(db);
    await tamper(db, async (raw) => {
      await raw.execute("DELETE FROM ledger_entries WHERE seq = 4");
    });
    const [seq, problem] = await brokenAt(db);
    assert.equal(seq, 4);
    assert.match(problem, /it was removed \(a head record names it\)/);
  });
});

Deno.test("verifyLedger() catches a re-chained last row by its head record", async () => {
  await withDb(async (db) => {
    await seed(db);
    await tamper(db, (raw) => rewriteVerdict(raw, 4, { rechain: true }));
    const [seq, problem] = await brokenAt(db);
    assert.equal(seq, 4);
    assert.match(
      problem,
      /chain digest differs from the one recorded when it was appended/,
    );
  });
});

Deno.test("verifyLedger() catches removed head records", async () => {
  await withDb(async (db) => {
    await seed(db);
    await tamper(db, async (raw) => {
      await raw.execute("DELETE FROM ledger_head");
    });
    const [seq, problem] = await brokenAt(db);
    assert.equal(seq, 4);
    assert.match(problem, /no head record exists/);
  });
});

Deno.test("verifyLedger() catches a run whose verdict its findings do not imply, digests and chain recomputed, or whose findings were removed", async () => {
  for (
    const [edit, problem] of [
      [
        { verdict: "PASS", findings: [{ severity: "fail" }] },
        /its stored verdict is PASS but its findings imply FAIL \(edited\)/,
      ],
      [
        { verdict: "FAIL", findings: undefined },
        /its stored verdict is FAIL and it has no findings to imply one \(edited\)/,
      ],
    ] as const
  ) {
    await withDb(async (db) => {
      await seed(db);
      await tamper(db, async (raw) => {
        const entry = toEntry(
          (await raw.execute("SELECT * FROM ledger_entries WHERE seq = 2"))
            .rows[0]!,
        );
        const payload = canonicalJson({
          ...JSON.parse(entry.payload),
          ...edit,
        });
        const digest = payloadDigest(payload);
        await raw.execute({
          sql:
            "UPDATE ledger_entries SET payload = ?, payload_digest = ?, chain_digest = ? WHERE seq = 2",
          args: [
            payload,
            digest,
            chainDigest({ ...entry, payload_digest: digest }),
          ],
        });
      });
      const [seq, found] = await brokenAt(db);
      assert.equal(seq, 2);
      assert.match(found, problem);
    });
  }
});

Deno.test("recordRun() refuses a report whose verdict its findings do not imply: the ledger never stores what its readers refuse", async () => {
  await withDb(async (db) => {
    await migrate(db, ALL_MIGRATIONS);
    const report = {
      run_id: "run-x",
      kind: "external",
      state: "completed",
      finished_at: "2026-12-01T00:00:00.000Z",
      target: { id: "staging-a" },
      verdict: "PASS",
      findings: [{ severity: "inconclusive" }],
    } as unknown as RunReport;
    await assert.rejects(
      () => recordRun(db, report),
      /^TypeError: Cannot record run run-x: its stored verdict is PASS but its findings imply INCONCLUSIVE$/,
    );
  });
});
