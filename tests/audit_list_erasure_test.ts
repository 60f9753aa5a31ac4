/** `trace audit list` with erasure requests: short table cells, the whole detail in `--json`. */

import assert from "node:assert/strict";
import { join } from "node:path";
import type { Hono } from "hono";
import { main } from "../cli.ts";
import {
  appendAudit,
  formatErasureDetail,
  listAudit,
  parseErasureDetail,
} from "../lib/auth/mod.ts";
import { ERASURE_KEY_FILE, erasureKey } from "../lib/obs/maint/mod.ts";
import { createApp } from "../routes/app.ts";
import { captureIo } from "./_helpers.ts";
import { seed, withErasureDb } from "./erasure_support.ts";

const ADMIN = "admin-token-0123456789";
const SUBJECT = { application_id: "app", user_id: "alice" };

function post(app: Hono, body: unknown): Promise<Response> {
  return Promise.resolve(app.request("http://127.0.0.1/api/erasures", {
    method: "POST",
    headers: {
      "content-type": "application/json",
      authorization: `Bearer ${ADMIN}`,
    },
    body: JSON.stringify(body),
  }));
}

async function auditList(dir: string, ...args: string[]): Promise<string> {
  const io = captureIo();
  const code = await main(["audit", "list", "--data-dir", dir, ...args], io);
  assert.equal(code, 0, io.stderr());
  return io.stdout();
}

Deno.test("trace audit list shows an erasure as its action, a bare outcome and a digest prefix; --json keeps the whole detail", async () => {
  await withErasureDb(async (db, dir) => {
    await seed(db);
    const app = createApp({
      db,
      uiAuthToken: ADMIN,
      erasureKey: await erasureKey(dir),
    });
    const plan = await (await post(app, { subject: SUBJECT })).json();
    assert.equal(
      (await post(app, { subject: SUBJECT, apply: true })).status,
      400,
      "an apply without its confirmation is refused",
    );
    const applied = await post(app, {
      subject: SUBJECT,
      apply: true,
      confirmation: plan.confirmation,
    });
    assert.equal(applied.status, 200);
    const [done] = await listAudit(db, { limit: 1 });
    const detail = parseErasureDetail(String(done!.payload.detail))!;
    const digest = detail.subject_digest.slice("hmac-sha256:".length, 24);

    const table = (await auditList(dir)).split("\n").filter((line) =>
      line !== ""
    );
    const rows = table.slice(1).map((line) => line.trim().split(/\s{2,}/));
    assert.deepEqual(
      rows.map((row) => row.slice(3)),
      [
        [
          "subject.erase apply",
          "succeeded",
          `application_id=app user=#${digest}`,
        ],
        [
          "subject.erase apply",
          "attempted",
          `application_id=app user=#${digest}`,
        ],
        [
          "subject.erase apply",
          "refused: confirmation_missing",
          `application_id=app user=#${digest}`,
        ],
        [
          "subject.erase plan",
          "succeeded",
          `application_id=app user=#${digest}`,
        ],
        [
          "subject.erase plan",
          "attempted",
          `application_id=app user=#${digest}`,
        ],
      ],
    );
    const text = table.join("\n");
    assert.doesNotMatch(text, /request |receipt |[0-9a-f]{64}/);

    const json = JSON.parse(await auditList(dir, "--json")).entries;
    assert.equal(json[0].detail, done!.payload.detail);
    assert.match(
      json[0].detail,
      /^obs\.erasure\.apply user hmac-sha256:[0-9a-f]{64} request \S+ receipt erasure-\S+$/,
    );
  });
});

Deno.test("an empty trace audit list names erasure requests among what is recorded and where an erasure by the CLI is listed", async () => {
  await withErasureDb(async (_db, dir) => {
    const out = await auditList(dir);
    assert.match(out, /^No audit entries match\./);
    assert.match(out, /erasure requests\)/);
    assert.match(out, /trace obs erase --receipts/);
  });
});

Deno.test("trace audit list --subject warns of an unreadable erasure key only when the trail holds an erasure entry it would list", async () => {
  await withErasureDb(async (db, dir) => {
    await appendAudit(db, {
      actor: { name: "admin-1", role: "admin", via: "session" },
      action: "content.reveal",
      scope: { application_id: "app", user_id: "alice" },
      targets: { event_id: "a1", user_id: "alice" },
      reason: "SUP-1",
      outcome: "succeeded",
    });
    const list = async (...args: string[]) => {
      const io = captureIo();
      const code = await main([
        "audit",
        "list",
        "--json",
        "--data-dir",
        dir,
        "--subject",
        "user_id=alice",
        ...args,
      ], io);
      assert.equal(code, 0, io.stderr());
      return { err: io.stderr(), entries: JSON.parse(io.stdout()).entries };
    };
    // Nothing was ever erased, so there is no key and nothing it would match.
    const never = await list();
    assert.equal(never.err, "");
    assert.equal(never.entries.length, 1);

    await seed(db);
    const app = createApp({
      db,
      uiAuthToken: ADMIN,
      erasureKey: await erasureKey(dir),
    });
    assert.equal((await post(app, { subject: SUBJECT })).status, 200);
    await Deno.remove(join(dir, ERASURE_KEY_FILE));
    assert.match(
      (await list()).err,
      /^warning: erasure requests \(action subject\.erase\) name their subject under erasure\.key, so none of them is matched: No erasure key at /,
    );
    // Filters that list no erasure entry leave none unmatched.
    assert.equal((await list("--action", "content.reveal")).err, "");
    assert.equal((await list("--operator", "someone-else")).err, "");
  });
});

Deno.test("an erasure entry's detail reads back as it was written, and another line reads as none", () => {
  const detail = {
    code: "role",
    action: "obs.erasure.apply",
    selector: "thread",
    subject_digest: `hmac-sha256:${"a".repeat(64)}`,
    request_id: "3f0e",
    receipt_id: null,
  } as const;
  assert.deepEqual(parseErasureDetail(formatErasureDetail(detail)), detail);
  assert.equal(parseErasureDetail("identityResolver:threw"), null);
});
