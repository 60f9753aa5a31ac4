import assert from "node:assert/strict";
import type { Client } from "@libsql/client";
import { withoutTriggers } from "./_tamper.ts";
import type { TraceDb } from "../lib/db.ts";
import { LedgerIntegrityError, RefusedError } from "../lib/errors.ts";
import { canonicalJson } from "../lib/canonical_json.ts";
import {
  appendEntry,
  chainDigest,
  payloadDigest,
} from "../lib/ledger/chain.ts";
import {
  listReceipts,
  readReceipt,
  receiptProblem,
} from "../lib/ledger/erasure_receipts.ts";
import { ledgerHead } from "../lib/ledger/head.ts";
import { verifyLedger } from "../lib/ledger/verify.ts";
import { parseErasureSubject, planErasure } from "../lib/obs/maint/mod.ts";
import { eraseSubject, verifyErasure } from "../lib/runs/mod.ts";
import {
  event,
  indexedIds,
  seed,
  TEST_KEY,
  withErasureDb,
} from "./erasure_support.ts";

const key = TEST_KEY;
const ALICE = parseErasureSubject({ application_id: "app", user_id: "alice" });

async function eraseAlice(db: TraceDb) {
  const plan = await planErasure(db, ALICE, { key });
  return await eraseSubject(db, ALICE, plan.confirmation, { key });
}

/** Opens the file with a plain client, as an outside tool would, without the append-only triggers. */
function tamper(
  db: TraceDb,
  fn: (raw: Client) => Promise<void>,
): Promise<void> {
  return withoutTriggers(db, ["ledger_entries"], fn);
}

Deno.test("eraseSubject() appends a receipt with a keyed digest and counts, never the raw ids", async () => {
  await withErasureDb(async (db) => {
    await seed(db);
    const { result, receipt } = await eraseAlice(db);
    const r = receipt.receipt;
    assert.equal(r.schema, "trace.erasure-receipt/1");
    assert.match(r.receipt_id, /^erasure-\d{8}T\d{6}Z-[0-9a-f]{12}$/);
    assert.equal(r.trigger, "operator");
    assert.equal(r.selector, "user");
    assert.equal(r.scope, "all");
    assert.equal(r.subject_digest, result.subject_digest);
    assert.equal(r.events, 3);
    assert.deepEqual(r.tables, result.tables);
    assert.equal(r.secure_delete, true);
    assert.equal(receiptProblem(r), null);
    const stored = (await db.client.execute({
      sql: "SELECT payload FROM ledger_entries WHERE kind = 'erasure'",
      args: [],
    })).rows[0]!.payload as string;
    for (const raw of ["alice", "app", "t1", "a1", "doc-1"]) {
      assert.ok(!stored.includes(`"${raw}"`), `the receipt names ${raw}`);
    }
    assert.ok(!stored.includes("ALICE_PREVIEW"));
    // The head after it is the ledger's head, and the chain verifies with it.
    assert.deepEqual(receipt.head, await ledgerHead(db));
    const verified = await verifyLedger(db);
    assert.equal(verified.ok, true);
    assert.equal(verified.receipts, 1);
    assert.deepEqual((await readReceipt(db, r.receipt_id)).receipt, r);
    assert.deepEqual((await listReceipts(db)).map((x) => x.seq), [receipt.seq]);
  });
});

Deno.test("verifyErasure() checks the subject's digest and that nothing of it remains", async () => {
  await withErasureDb(async (db) => {
    await seed(db);
    const { receipt } = await eraseAlice(db);
    const id = receipt.receipt.receipt_id;
    const clean = await verifyErasure(db, id, ALICE, { key });
    assert.equal(clean.clean, true);
    assert.equal(clean.remaining.events, 0);
    assert.equal(clean.head, `${receipt.seq}:${receipt.head.chain_digest}`);

    const bob = parseErasureSubject({ application_id: "app", user_id: "bob" });
    await assert.rejects(
      verifyErasure(db, id, bob, { key }),
      (e: unknown) =>
        e instanceof RefusedError && /not the one it names/.test(e.message),
    );
    await assert.rejects(
      verifyErasure(db, id, ALICE, { key: new Uint8Array(32).fill(9) }),
      (e: unknown) =>
        e instanceof RefusedError && /another erasure key/.test(e.message),
    );
    await assert.rejects(
      verifyErasure(db, "erasure-none", ALICE, { key }),
      /No erasure receipt/,
    );

    // Something of the subject comes back (a late write): verification says
    // so, apart from what the erasure covered, which stays gone.
    await seed(db, [event("a9", { user_id: "alice", preview: "again" })]);
    const dirty = await verifyErasure(db, id, ALICE, { key });
    assert.equal(dirty.clean, false);
    assert.equal(dirty.remaining.clean, true);
    assert.equal(dirty.remaining.events, 0);
    assert.equal(dirty.remaining.later_events, 1);
  });
});

Deno.test("a tampered receipt row is caught by ledger verify and refused by verifyErasure()", async (t) => {
  await t.step("edited payload", async () => {
    await withErasureDb(async (db) => {
      await seed(db);
      const { receipt } = await eraseAlice(db);
      await tamper(db, async (raw) => {
        await raw.execute(
          `UPDATE ledger_entries SET payload = replace(payload, '"events":3', '"events":0') WHERE kind = 'erasure'`,
        );
      });
      const result = await verifyLedger(db);
      assert.equal(result.ok, false);
      assert.equal(result.broken?.seq, receipt.seq);
      assert.match(result.broken!.problem, /does not match its digest/);
      await assert.rejects(
        verifyErasure(db, receipt.receipt.receipt_id, ALICE, { key }),
        LedgerIntegrityError,
      );
    });
  });
  await t.step("payload and digests recomputed", async () => {
    await withErasureDb(async (db) => {
      await seed(db);
      const { receipt } = await eraseAlice(db);
      await tamper(db, async (raw) => {
        const row = (await raw.execute(
          "SELECT * FROM ledger_entries WHERE kind = 'erasure'",
        )).rows[0]!;
        const payload = { ...JSON.parse(String(row.payload)), events: 0 };
        const text = canonicalJson(payload);
        const digest = payloadDigest(text);
        const chain = chainDigest({
          chain_version: Number(row.chain_version),
          prev_chain: String(row.prev_chain),
          kind: "erasure",
          entity_id: String(row.entity_id),
          target_id: null,
          payload_digest: digest,
          created_at: String(row.created_at),
        });
        await raw.execute({
          sql:
            "UPDATE ledger_entries SET payload = ?, payload_digest = ?, chain_digest = ? WHERE seq = ?",
          args: [text, digest, chain, Number(row.seq)],
        });
      });
      const result = await verifyLedger(db);
      assert.equal(result.ok, false);
      assert.equal(result.broken?.seq, receipt.seq);
      assert.match(result.broken!.problem, /recorded when it was appended/);
    });
  });
});

Deno.test("ledger verify refuses a chained receipt that names anything but a digest and counts", async () => {
  await withErasureDb(async (db) => {
    await seed(db);
    const { receipt } = await eraseAlice(db);
    const forged = {
      ...receipt.receipt,
      receipt_id: "erasure-20260101T000000Z-000000000000",
      user_id: "alice",
    };
    const entry = await appendEntry(db, {
      kind: "erasure",
      entityId: forged.receipt_id,
      targetId: null,
      payload: forged,
    });
    const result = await verifyLedger(db);
    assert.equal(result.ok, false);
    assert.equal(result.broken?.seq, entry.seq);
    assert.match(result.broken!.problem, /unknown field "user_id"/);
    assert.match(
      receiptProblem({ ...receipt.receipt, subject_digest: "alice" })!,
      /not a keyed digest/,
    );
  });
});

Deno.test("a broken ledger refuses the erasure: nothing is deleted without its receipt", async () => {
  await withErasureDb(async (db) => {
    await seed(db);
    await eraseAlice(db);
    await tamper(db, async (raw) => {
      await raw.execute(
        `UPDATE ledger_entries SET payload = replace(payload, '"events":3', '"events":2')`,
      );
    });
    const bob = parseErasureSubject({ application_id: "app", user_id: "bob" });
    const plan = await planErasure(db, bob, { key });
    await assert.rejects(
      eraseSubject(db, bob, plan.confirmation, { key }),
      LedgerIntegrityError,
    );
    assert.ok((await indexedIds(db)).includes("b1"));
  });
});
