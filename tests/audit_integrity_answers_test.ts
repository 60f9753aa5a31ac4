/** A broken audit trail refuses privileged actions with its own answer: the broken entry and trace audit verify. */

import assert from "node:assert/strict";
import type { Hono } from "hono";
import { AuditIntegrityError } from "../lib/auth/mod.ts";
import type { TraceDb } from "../lib/db.ts";
import { createApp } from "../routes/app.ts";
import {
  indexedIds,
  seed,
  TEST_KEY,
  withErasureDb,
} from "./erasure_support.ts";
import {
  ANSWER_PREVIEW,
  ask,
  auditRows,
  jsonOf,
  REVEAL,
  withHost,
} from "./operator_support.ts";
import { withRawClient } from "./_tamper.ts";

const BROKEN =
  /^The audit trail is broken at entry seq 1 \(the outcome column differs from the chained payload.*\), so the action was refused: run trace audit verify$/;

/** Edits entry 1's outcome column with its trigger dropped, as an outside tool could. */
async function breakFirstEntry(db: TraceDb): Promise<void> {
  await withRawClient(db, async (client) => {
    await client.execute("DROP TRIGGER auth_audit_no_update");
    await client.execute(
      "UPDATE auth_audit SET outcome = 'failed' WHERE seq = 1",
    );
  });
}

Deno.test("a reveal on a broken audit trail answers audit_integrity naming the entry, and shows no content", async () => {
  await withHost({}, async ({ app, db, logs }) => {
    const first = await ask(app, "POST", "/traces/reveal", {
      as: "admin-1",
      json: REVEAL,
    });
    assert.equal(first.status, 200);
    await first.body?.cancel();
    await breakFirstEntry(db);
    const response = await ask(app, "POST", "/traces/reveal", {
      as: "admin-1",
      json: REVEAL,
    });
    assert.equal(response.status, 503);
    const text = await response.text();
    assert.ok(!text.includes(ANSWER_PREVIEW));
    const { error } = JSON.parse(text);
    assert.equal(error.code, "audit_integrity");
    assert.match(error.message, BROKEN);
    assert.match(
      logs.join("\n"),
      /audit: The audit trail is broken at entry seq 1/,
    );
    assert.equal((await auditRows(db)).length, 1, "nothing was appended");
  });
});

Deno.test("an account resolution on a broken audit trail answers audit_integrity too", async () => {
  await withHost({}, async ({ app, db }) => {
    const first = await ask(app, "POST", "/traces/reveal", {
      as: "admin-1",
      json: REVEAL,
    });
    await first.body?.cancel();
    await breakFirstEntry(db);
    const response = await ask(app, "POST", "/traces/account/resolve", {
      as: "ops-1",
      json: { email: "ada@example.com" },
    });
    assert.equal(response.status, 503);
    const { error } = await jsonOf(response);
    assert.equal(error.code, "audit_integrity");
    assert.match(error.message, BROKEN);
  });
});

function post(app: Hono, body: unknown): Promise<Response> {
  return Promise.resolve(app.request("http://127.0.0.1/api/erasures", {
    method: "POST",
    headers: {
      "content-type": "application/json",
      authorization: "Bearer admin-token-0123456789",
    },
    body: JSON.stringify(body),
  }));
}

const SUBJECT = { application_id: "app", user_id: "alice" };

Deno.test("an erasure on a broken audit trail answers audit_integrity naming the entry, and runs nothing", async () => {
  await withErasureDb(async (db) => {
    await seed(db);
    const app = createApp({
      db,
      uiAuthToken: "admin-token-0123456789",
      erasureKey: TEST_KEY,
      log: () => {},
    });
    const plan = await jsonOf(await post(app, { subject: SUBJECT }));
    await breakFirstEntry(db);
    for (
      const body of [
        { subject: SUBJECT },
        { subject: SUBJECT, apply: true, confirmation: plan.confirmation },
      ]
    ) {
      const response = await post(app, body);
      assert.equal(response.status, 503);
      const { error } = await jsonOf(response);
      assert.equal(error.code, "audit_integrity");
      assert.match(error.message, BROKEN);
      assert.doesNotMatch(error.message, /retry once/);
    }
    assert.equal((await indexedIds(db)).length, 7, "nothing was erased");
  });
});

Deno.test("an applied erasure whose outcome a broken trail refused says where the trail is broken", async () => {
  await withErasureDb(async (db) => {
    await seed(db);
    const app = createApp({
      db,
      uiAuthToken: "admin-token-0123456789",
      erasureKey: TEST_KEY,
      log: () => {},
      erasureAudit: (entry) =>
        entry.outcome === "attempted" ? Promise.resolve() : Promise.reject(
          new AuditIntegrityError(
            4,
            "The audit trail is broken at entry seq 4: run trace audit verify",
          ),
        ),
    });
    const dry = await post(app, { subject: SUBJECT });
    assert.equal(dry.status, 503);
    assert.equal((await jsonOf(dry)).error.code, "audit_integrity");
    const plain = createApp({
      db,
      uiAuthToken: "admin-token-0123456789",
      erasureKey: TEST_KEY,
      log: () => {},
    });
    const plan = await jsonOf(await post(plain, { subject: SUBJECT }));
    const applied = await post(app, {
      subject: SUBJECT,
      apply: true,
      confirmation: plan.confirmation,
    });
    assert.equal(applied.status, 200);
    const body = await jsonOf(applied);
    assert.match(
      body.audit_warning,
      /the audit trail is broken at entry seq 4 \(run trace audit verify\)/,
    );
  });
});
