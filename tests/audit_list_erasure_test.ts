/** `trace audit list` with erasure requests: short table cells, the whole detail in `--json`. */

import assert from "node:assert/strict";
import type { Hono } from "hono";
import { main } from "../cli.ts";
import {
  formatErasureDetail,
  listAudit,
  parseErasureDetail,
} from "../lib/auth/mod.ts";
import { erasureKey } from "../lib/obs/maint/mod.ts";
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
