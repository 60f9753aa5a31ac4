import assert from "node:assert/strict";
import type { Hono } from "hono";
import { listReceipts } from "../lib/ledger/erasure_receipts.ts";
import { createApp } from "../routes/app.ts";
import type { ErasureAuditEntry } from "../routes/erasure.ts";
import {
  indexedIds,
  seed,
  TEST_KEY,
  withErasureDb,
} from "./erasure_support.ts";

const ADMIN = "admin-token-0123456789";
const INGEST = "ingest-token-0123456789";
const SUBJECT = { application_id: "app", user_id: "alice" };

function post(app: Hono, body: unknown, token?: string): Promise<Response> {
  return Promise.resolve(app.request("http://127.0.0.1/api/erasures", {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify(body),
  }));
}

Deno.test("POST /api/erasures: a dry run, then apply with its confirmation, for the admin token only", async () => {
  await withErasureDb(async (db) => {
    await seed(db);
    const audited: ErasureAuditEntry[] = [];
    const app = createApp({
      db,
      ingestToken: INGEST,
      uiAuthToken: ADMIN,
      erasureKey: TEST_KEY,
      erasureAudit: (entry) => {
        audited.push(entry);
        return Promise.resolve();
      },
    });
    assert.equal((await post(app, { subject: SUBJECT })).status, 401);
    assert.equal(
      (await post(app, { subject: SUBJECT }, INGEST)).status,
      401,
      "the ingest token is not an administrator",
    );
    const dry = await post(app, { subject: SUBJECT }, ADMIN);
    assert.equal(dry.status, 200);
    const plan = await dry.json();
    assert.equal(plan.dry_run, true);
    assert.equal(plan.events, 3);
    assert.equal((await indexedIds(db)).length, 7);

    const missing = await post(app, { subject: SUBJECT, apply: true }, ADMIN);
    assert.equal(missing.status, 400);
    const stale = await post(app, {
      subject: SUBJECT,
      apply: true,
      confirmation: "erase 3 events 0000000000000000",
    }, ADMIN);
    assert.equal(stale.status, 400);
    assert.match(
      (await stale.json()).error.message,
      /confirmation does not match/,
    );

    const applied = await post(app, {
      subject: SUBJECT,
      apply: true,
      confirmation: plan.confirmation,
    }, ADMIN);
    assert.equal(applied.status, 200);
    const { result, receipt } = await applied.json();
    assert.equal(result.events, 3);
    assert.equal(receipt.receipt.trigger, "operator");
    assert.deepEqual(await indexedIds(db), ["b1", "m1", "n1", "n2"]);

    // Every request was audited first, by digest; the apply names its receipt.
    assert.deepEqual(audited.map((a) => a.action), [
      "obs.erasure.plan",
      "obs.erasure.apply",
      "obs.erasure.apply",
    ]);
    assert.equal(audited.at(-1)!.receipt_id, receipt.receipt.receipt_id);
    assert.equal(audited.at(-1)!.subject_digest, plan.subject_digest);
    assert.ok(!JSON.stringify(audited).includes("alice"));
  });
});

Deno.test("POST /api/erasures refuses bad bodies, other methods, a failing audit hook and a server without a key", async () => {
  await withErasureDb(async (db) => {
    await seed(db);
    const app = createApp({
      db,
      uiAuthToken: ADMIN,
      erasureKey: TEST_KEY,
      erasureAudit: () => Promise.reject(new Error("audit disk full")),
    });
    const refused = await post(app, { subject: SUBJECT }, ADMIN);
    assert.equal(refused.status, 503);
    assert.match((await refused.json()).error.message, /audit trail refused/);
    assert.equal((await listReceipts(db).catch(() => [])).length, 0);

    const plain = createApp({ db, uiAuthToken: ADMIN, erasureKey: TEST_KEY });
    const bad = await post(
      plain,
      { subject: { application_id: "app" } },
      ADMIN,
    );
    assert.equal(bad.status, 400);
    assert.match((await bad.json()).error.message, /exactly one of/);
    const extra = await post(plain, { subject: SUBJECT, force: true }, ADMIN);
    assert.equal(extra.status, 400);
    const get = await plain.request("http://127.0.0.1/api/erasures", {
      headers: { authorization: `Bearer ${ADMIN}` },
    });
    assert.equal(get.status, 405);

    const keyless = createApp({ db, uiAuthToken: ADMIN });
    assert.equal(
      (await post(keyless, { subject: SUBJECT }, ADMIN)).status,
      501,
    );
    assert.equal((await indexedIds(db)).length, 7);
  });
});
