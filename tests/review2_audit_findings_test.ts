/**
 * Known gaps, each as a test that states the expected behaviour and fails
 * today: runs the ledger lacks as the job view (MCP) and `external-save`
 * see them, a kept report that contradicts its own checkpoint, a changed
 * kept report hidden from the run list, the gate's error code for a target
 * without runs, a replaced audit subject key, and an email in a reason
 * written as a text escape.
 */

import assert from "node:assert/strict";
import { createClient } from "@libsql/client";
import * as v from "valibot";
import { appendAudit, Reason, verifyAudit } from "../lib/auth/mod.ts";
import { migrate } from "../lib/db.ts";
import { ALL_MIGRATIONS } from "../lib/migrations.ts";
import { withDb } from "./_helpers.ts";

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
