/**
 * Keyed digests of identifying values (user, thread, memory, event and
 * resource ids) for records that must outlive an erasure: the audit trail
 * and replay drafts keep `hmac-sha256:<hex>` instead of the id, so erasing a
 * subject never needs to rewrite a chained record, and the stored digest
 * says nothing to someone without the key.
 *
 * The key is 256 random bits, made once per database (`auth_keys`). Someone
 * holding the database can still test a guessed id against a digest; that is
 * what lets `trace audit list --subject` find a subject's entries.
 *
 * @module
 */

import type { Transaction } from "@libsql/client";
import { createHmac } from "node:crypto";
import type { TraceDb } from "../db.ts";

/** Kinds of identifying values, each digested under its own label. */
export const SUBJECT_KINDS = [
  "user_id",
  "thread_id",
  "memory_id",
  "event_id",
  "resource_id",
] as const;
/** One of {@link SUBJECT_KINDS}. */
export type SubjectKind = typeof SUBJECT_KINDS[number];

const KEY_NAME = "subject_digest";

/** Something that runs SQL: the database or an open transaction. */
type Executor = Pick<Transaction, "execute">;

function executor(db: TraceDb | Transaction): Executor {
  return "client" in db ? db.client : db;
}

/** The digest of `value` as a `kind`, under `key` (hex). */
export function subjectDigest(
  key: string,
  kind: SubjectKind,
  value: string,
): string {
  const mac = createHmac("sha256", key).update(`${kind}\0${value}`);
  return `hmac-sha256:${mac.digest("hex")}`;
}

/** Reads the key, creating it inside `tx` (a write transaction) when missing. */
export async function subjectKeyFor(tx: Transaction): Promise<string> {
  const secret = Array.from(
    crypto.getRandomValues(new Uint8Array(32)),
    (byte) => byte.toString(16).padStart(2, "0"),
  ).join("");
  await tx.execute({
    sql:
      "INSERT OR IGNORE INTO auth_keys (name, secret, created_at) VALUES (?, ?, ?)",
    args: [KEY_NAME, secret, new Date().toISOString()],
  });
  return (await readSubjectKey(tx))!;
}

/** The key, or `null` when nothing was ever digested in this database. */
export async function readSubjectKey(
  db: TraceDb | Transaction,
): Promise<string | null> {
  const result = await executor(db).execute({
    sql: "SELECT secret FROM auth_keys WHERE name = ?",
    args: [KEY_NAME],
  });
  const row = result.rows[0];
  return row ? String(row.secret) : null;
}
