/**
 * Known gaps of the audit trail, each as a test that states the expected
 * behaviour and fails today: a replaced audit subject key, and an email in
 * a reason written as a text escape.
 */

import assert from "node:assert/strict";
import { createClient } from "@libsql/client";
import * as v from "valibot";
import {
  appendAudit,
  type AuditRecord,
  Reason,
  verifyAudit,
} from "../lib/auth/mod.ts";
import { migrate } from "../lib/db.ts";
import { ALL_MIGRATIONS } from "../lib/migrations.ts";
import { withDb } from "./_helpers.ts";

const RECORD: AuditRecord = {
  actor: { name: "admin-1", role: "admin", via: "session" },
  action: "content.reveal",
  scope: { application_id: "app-1", user_id: "user-ada" },
  targets: {
    agent_id: "support-bot",
    root_trace_id: "root-1",
    event_id: "evt-answer",
    user_id: "user-ada",
  },
  reason: "SUP-1",
  outcome: "succeeded",
};

Deno.test({
  name:
    "audit verify names a subject key replaced by another secret with the same name and time",
  ignore: true, // nothing chained records which key the digests were made with (lib/auth/audit verify)
  fn: async () => {
    await withDb(async (db) => {
      await migrate(db, ALL_MIGRATIONS);
      await appendAudit(db, RECORD);
      await appendAudit(db, { ...RECORD, reason: "SUP-2" });
      const raw = createClient({ url: db.url });
      try {
        await raw.execute("DROP TRIGGER auth_keys_no_delete");
        const key = await raw.execute(
          "SELECT name, secret, created_at FROM auth_keys",
        );
        const row = key.rows[0]!;
        await raw.execute("DELETE FROM auth_keys");
        await raw.execute({
          sql:
            "INSERT INTO auth_keys (name, secret, created_at) VALUES (?, ?, ?)",
          args: [
            String(row.name),
            "0".repeat(String(row.secret).length),
            String(row.created_at),
          ],
        });
      } finally {
        raw.close();
      }
      const result = await verifyAudit(db);
      assert.equal(result.ok, false, JSON.stringify(result));
    });
  },
});

Deno.test({
  name: "a reason holding an email written with a text escape of @ is refused",
  ignore: true, // mentionsEmail decodes percent escapes and character references, not \u0040 or \x40
  fn: () => {
    for (
      const reason of [
        "SUP-1 alice\\u0040example.com",
        "SUP-1 alice\\x40example.com",
      ]
    ) {
      assert.equal(v.safeParse(Reason, reason).success, false, reason);
    }
  },
});
